"""BM25 candidates from the reader's own keyword index: the query's, and those among the files dated in the
days it names (the lists above looked for the rest of the question; the files dated then get a list of
their own)."""

from __future__ import annotations

from muninn.plugins.search import keyword
from muninn.plugins.search.state import SearchState
from muninn.plugins.search.types import over_targets


class Keyword:
    name = "keyword"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return state.route != "vector" and state.searcher.index is not None

    def run(self, state: SearchState) -> None:
        assert state.searcher.index is not None
        index, match, top = state.searcher.index, state.match, state.cfg.keyword_top
        try:
            got = over_targets(self.name, lambda t: index.candidates(match, t, top), state.request.targets, top)
        except keyword.IndexDamaged as exc:
            # Damage found mid-query: the rest of this search (and the next) goes vector-only, said.
            state.searcher.drop_index(str(exc))
            state.warn(f"keyword stage skipped: {exc}")
            return
        state.lists[self.name] = got


class Dated:
    name = "dated"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return state.window is not None and state.searcher.index is not None

    def run(self, state: SearchState) -> None:
        assert state.searcher.index is not None and state.window is not None
        index, match, top = state.searcher.index, state.match, state.cfg.keyword_top
        between = state.window.bounds(state.ranking.date_slack_days)
        try:
            got = over_targets(self.name, lambda t: index.candidates(match, t, top, between=between),
                               state.request.targets, top)
        except keyword.IndexDamaged as exc:
            state.searcher.drop_index(str(exc))
            state.warn(f"keyword stage skipped: {exc}")
            return
        state.lists[self.name] = got
