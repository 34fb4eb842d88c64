"""muninn.export"""
