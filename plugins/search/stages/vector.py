"""OpenViking's vector candidates for what is sought: `find`, scoped to the target the reader may
read. The server applies the key's ACLs, so a reader never gets a URI it may not read.

When OpenViking is down, slow (search.timeout), answers a bad reply, or cannot embed the question
(the sidecar died, its circuit breaker is open), the question is answered from the keyword index
alone, with a warning naming the part and its fix (outage.py). Wrong keys and missing folders are
not outages: they stay errors (exit 5). Without a keyword index there is nothing to fall back on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from muninn.core.errors import AuthError, NotFound, ServerError
from muninn.plugins.search import outage
from muninn.plugins.search.state import SearchState
from muninn.plugins.search.types import Candidate, over_targets

if TYPE_CHECKING:
    from muninn.core.client import OpenViking


class VectorSource:
    name = "vector"

    def __init__(self, client: OpenViking) -> None:
        self.client = client
        self.calls = 0   # read by tests: identifier queries must never reach this stage

    def candidates(self, query: str, target: str, limit: int) -> list[Candidate]:
        self.calls += 1
        prefix = target.rstrip("/")
        out: list[Candidate] = []
        seen: set[str] = set()
        for item in self.client.find(query, target_uri=prefix, limit=limit):
            uri = str(item.get("uri", "")).rstrip("/")
            # Folder summaries (levels 0/1) are empty in vectors-only mode: keep files only.
            if item.get("level", 2) != 2 or uri in seen or not uri.startswith(prefix + "/"):
                continue
            seen.add(uri)
            score = float(item.get("score", 0.0))
            out.append(Candidate(uri=uri, score=score, stage_scores={"vector": round(score, 4)}))
        return out[:limit]


class Vector:
    name = "vector"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return state.route != "keyword"

    def run(self, state: SearchState) -> None:
        assert state.sought is not None
        sought, top = state.sought.query, state.cfg.vector_top
        searcher = state.searcher
        try:
            got = over_targets(self.name, lambda t: searcher.vector.candidates(sought, t, top),
                               state.request.targets, top)
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
        state.lists[self.name] = got
