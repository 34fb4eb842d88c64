"""OpenViking's vector candidates for what is sought.

When OpenViking is down, slow (search.timeout), answers a bad reply, or cannot embed the question
(the sidecar died, its circuit breaker is open), the question is answered from the keyword index
alone, with a warning naming the part and its fix (outage.py). Wrong keys and missing folders are
not outages: they stay errors (exit 5). Without a keyword index there is nothing to fall back on.
"""

from __future__ import annotations

from muninn.core.errors import AuthError, NotFound, ServerError
from muninn.plugins.search import outage
from muninn.plugins.search.state import SearchState
from muninn.plugins.search.types import check_candidates


class Vector:
    name = "vector"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return state.route != "keyword"

    def run(self, state: SearchState) -> None:
        assert state.sought is not None
        target, top = state.request.target, state.cfg.vector_top
        searcher = state.searcher
        try:
            got = searcher.vector.candidates(state.sought.query, target, top)
        except (AuthError, NotFound):
            raise
        except ServerError as exc:
            if searcher.index is None:
                raise
            state.warn(outage.warning(exc, searcher.settings, state.cfg.timeout))
            state.offline = True
            state.route = "keyword"
            return
        searcher.watch.saw_ok()
        state.lists[self.name] = check_candidates(self.name, got, target, top)
