"""An inventory entry the query names goes on top (pin.py says why)."""

from __future__ import annotations

from muninn.plugins.search import pin
from muninn.plugins.search.state import SearchState


class Pin:
    name = "pin"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return True

    def run(self, state: SearchState) -> None:
        state.fused = pin.apply(state.request.text, state.fused, state.docs)
