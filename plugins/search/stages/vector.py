"""OpenViking's vector candidates for what is sought."""

from __future__ import annotations

from muninn.plugins.search.stages import check_candidates
from muninn.plugins.search.state import SearchState


class Vector:
    name = "vector"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return state.route != "keyword"

    def run(self, state: SearchState) -> None:
        assert state.sought is not None
        target, top = state.request.target, state.cfg.vector_top
        got = state.searcher.vector.candidates(state.sought.query, target, top)
        state.lists[self.name] = check_candidates(self.name, got, target, top)
