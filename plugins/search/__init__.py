"""The search pipeline: routing, vector and keyword candidates, fusion, content, rerank, recency, cap."""
