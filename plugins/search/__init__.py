"""The search pipeline: routing, vector and keyword candidates, fusion, content, rerank, recency, cap."""

from muninn.plugins.search import sync_hook  # noqa: F401  (registers the after-sync index refresh)
