"""The search pipeline: routing, vector and keyword candidates, fusion, content, rerank, recency, cap."""

# Registered on import, like any outside plugin: the after-sync index refresh, the index's upgrade step.
from muninn.plugins.search import sync_hook, upgrade_index  # noqa: F401
