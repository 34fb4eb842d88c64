"""The read-only verify sweep over inventory proofs and secret checks. API: `muninn.plugins.verify.sweep`."""
