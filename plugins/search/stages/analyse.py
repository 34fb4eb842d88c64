"""Read the query once: its identifiers, content words and the days it names."""

from __future__ import annotations

from muninn.plugins.search import query
from muninn.plugins.search.state import SearchState


class Analyse:
    name = "analyse"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return True

    def run(self, state: SearchState) -> None:
        state.analysis = state.sought = query.analyse(state.request.text, today=state.request.now.date())
        state.use_route("vector")
