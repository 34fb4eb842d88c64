"""How text is redacted and a stream masked: the redactor (known values, then patterns: `patterns.py` runs
detect-secrets and the rules of `guards/rules/`), its tables kept between processes (`cache.py`), the
owner's allowlist of false positives, and exec masking over a child's streams (`mask.py`, `stream_views.py`)."""
