"""Vector candidates: OpenViking `find`, scoped to the target the reader may read.

The server applies the key's ACLs, so a reader never gets a URI it may not read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from muninn.plugins.search.types import Candidate

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
