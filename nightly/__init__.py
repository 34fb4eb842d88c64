"""Nightly jobs: policy drift, skills drift, leak-gated snapshots, completeness, verify, backup, the mirror.

A job is one module with one function under `jobs/` (`jobs/<name>.py`, beside `JobResult` and
`Context` in `jobs/__init__.py`); the services they call (the backup/ room, server_scan, scan_cache, skills,
...) are the modules of this package. muninn.nightly.plugin registers the built-in jobs through the
`register_jobs` hook, the door an outside job uses too. The runner runs them in order and reports
each as ok or failed with a reason.
"""
