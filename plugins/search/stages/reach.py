"""An identifier search never asks OpenViking, so it asks /health instead: when the server is away
the answer is said to come from the local keyword index alone (the vector stage says so itself)."""

from __future__ import annotations

from muninn.plugins.search.state import SearchState


class Reach:
    name = "reach"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return state.route == "keyword" and not state.offline

    def run(self, state: SearchState) -> None:
        problem = state.searcher.watch.problem(state.searcher.client, state.searcher.settings)
        if problem:
            state.warn(problem)
            state.offline = True
