"""Reciprocal rank fusion of the candidate lists: one ranked union, every list's score kept."""

from __future__ import annotations

from muninn.plugins.search import fusion
from muninn.plugins.search.state import SearchState


class Fusion:
    name = "fusion"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return True

    def run(self, state: SearchState) -> None:
        cfg = state.cfg
        # The dated list is BM25 too, and weighs as BM25.
        weights = {"vector": cfg.vector_weight, "keyword": cfg.keyword_weight, "dated": cfg.keyword_weight}
        state.fused = fusion.rrf(state.lists, cfg.rrf_k, weights)
