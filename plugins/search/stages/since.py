"""`--since`: only facts dated at or after the given moment; an undated fact is left out."""

from __future__ import annotations

from muninn.plugins.search.state import SearchState


class Since:
    name = "since"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return state.request.since_at is not None

    def run(self, state: SearchState) -> None:
        since_at = state.request.since_at
        assert since_at is not None
        state.fused = [c for c in state.fused if (d := state.docs[c.uri].date) is not None and d >= since_at]
