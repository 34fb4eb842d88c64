"""An identifier (ticket key, host, IP, path) goes to BM25 alone: it has no semantic neighbourhood."""

from __future__ import annotations

from muninn.plugins.search.request import Switch
from muninn.plugins.search.state import SearchState


class Routing:
    name = "routing"
    switch = Switch("routing", "Send identifiers through vectors too.")

    def applies(self, state: SearchState) -> bool:
        return state.analysis is not None and state.analysis.is_identifier

    def run(self, state: SearchState) -> None:
        state.use_route("keyword")
