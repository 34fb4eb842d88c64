"""Nightly jobs: policy drift, skills drift, leak-gated snapshots, completeness, verify.

A job is one module with one function; muninn.nightly.plugin registers the built-in ones through
the `register_jobs` hook, the door an outside job uses too. The runner runs them in order and
reports each as ok or failed with a reason.
"""
