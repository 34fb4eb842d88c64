"""A small prior for newer facts, on scores scaled to the best one: it breaks near-ties only. A
question that names its days asks about then, not about the newest: no prior for it."""

from __future__ import annotations

from muninn.plugins.search import recency
from muninn.plugins.search.request import Switch
from muninn.plugins.search.state import SearchState


class Recency:
    name = "recency"
    switch = Switch("recency", "No nudge for newer facts.")

    def applies(self, state: SearchState) -> bool:
        return bool(state.fused) and state.window is None

    def run(self, state: SearchState) -> None:
        cfg = state.cfg
        dated = {c.uri: state.docs[c.uri].date for c in state.fused}
        state.fused = recency.apply(state.fused, dated, cfg.half_life_days, cfg.recency_weight, state.request.now)
