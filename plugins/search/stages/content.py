"""The content of every fused candidate (what the features and the reranker read); a candidate
whose file is gone or not readable with this key is dropped."""

from __future__ import annotations

from muninn.plugins.search.state import SearchState


class Content:
    name = "content"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return True

    def run(self, state: SearchState) -> None:
        # Offline, only the keyword index's texts: a file it lacks is left out, not a second timeout.
        state.docs = state.searcher.fetcher.fetch([c.uri for c in state.fused], server=not state.offline)
        state.fused = [c for c in state.fused if c.uri in state.docs]
