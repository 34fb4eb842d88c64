"""muninn.plugins"""
