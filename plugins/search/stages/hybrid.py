"""A question goes to BM25 as well as to the vectors (off: vectors only)."""

from __future__ import annotations

from muninn.plugins.search.request import Switch
from muninn.plugins.search.state import SearchState


class Hybrid:
    name = "hybrid"
    switch = Switch("hybrid", "Vectors only: no BM25 keyword fusion.")

    def applies(self, state: SearchState) -> bool:
        return True

    def run(self, state: SearchState) -> None:
        state.use_route("hybrid")
