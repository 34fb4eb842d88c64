"""muninn.nightly"""
