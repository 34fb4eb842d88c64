"""muninn.guards"""
