"""Nightly jobs: policy drift, skills drift, leak-gated snapshots, completeness, verify.

A job is one module that registers itself with `@job`; the runner runs them in order and
reports each as ok or failed with a reason. Built-ins use the same door as a plugin would.
"""
