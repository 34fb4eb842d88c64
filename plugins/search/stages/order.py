"""The last evidence and the page: the recency prior, the inventory entry a query names, one file's share of
the page. Each is a ranking.py step; these stages only say when it applies and what it reads."""

from __future__ import annotations

from muninn.plugins.search import ranking
from muninn.plugins.search.request import Switch
from muninn.plugins.search.state import SearchState


class Recency:
    """A small prior for newer facts, on scores scaled to the best one: it breaks near-ties only. A
    question that names its days asks about then, not about the newest: no prior for it."""

    name = "recency"
    switch = Switch("recency", "No nudge for newer facts.")

    def applies(self, state: SearchState) -> bool:
        return bool(state.fused) and state.window is None

    def run(self, state: SearchState) -> None:
        r = state.ranking
        dated = {c.uri: state.docs[c.uri].date for c in state.fused}
        state.fused = ranking.with_recency(state.fused, dated, r.half_life_days, r.recency_weight, state.request.now)


class Pin:
    """An inventory entry named by the query goes on top (ranking.pinned_first)."""

    name = "pin"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return True

    def run(self, state: SearchState) -> None:
        state.fused = ranking.pinned_first(state.request.text, state.fused, state.docs)


class Cap:
    """At most `search.per_file` hits from one source file in the first `search.k` places, so one long
    document cannot fill the page. Facts cut from one note share `source_path`; plain files count as their own."""

    name = "cap"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return True

    def run(self, state: SearchState) -> None:
        file_of = {c.uri: state.docs[c.uri].file_key for c in state.fused}
        state.fused = ranking.per_file(state.fused, file_of, state.cfg.per_file, window=state.cfg.k)
