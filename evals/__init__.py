"""muninn.evals"""
