"""muninn's hits and the outside memories' as one list, ordered by ranking.union (the one ordering
module): round robin by rank within each memory, muninn first, then one cross-encoder pass over the
union where a reranker is loaded and sure. Which order stood is returned, and said in every result."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from muninn.core.ranking_profile import Ranking
from muninn.plugins.search import ranking
from muninn.plugins.search.types import Hit, Reranker, check_scores

ROUND_ROBIN = "round robin"
RERANKED = "reranked"


def _text(hit: Hit) -> str:
    return "\n".join(x for x in (hit.breadcrumb, hit.title, hit.snippet) if x)


def merge(query: str, own: Sequence[Hit], outside: Mapping[str, Sequence[Hit]], reranker: Reranker | None,
          profile: Ranking) -> tuple[list[Hit], str, list[str]]:
    """(the union in its final order, which order that is, warnings)."""
    warnings: list[str] = []

    def scores(hits: list[Hit]) -> list[float] | None:
        if reranker is None:
            return None
        try:
            return check_scores(reranker.name, reranker.rerank(query, [_text(h) for h in hits]), len(hits))
        except Exception as exc:   # an unavailable reranker leaves round robin final, and says so
            warnings.append(f"the union was not reranked ({exc}): round robin order")
            return None

    got: dict[int, float] = {}

    def recorded(hits: list[Hit]) -> list[float] | None:
        s = scores(hits)
        if s is not None:
            got.update({id(h): v for h, v in zip(hits, s, strict=True)})
        return s

    ordered, reranked = ranking.union([list(own), *outside.values()], recorded, lambda h: h.date,
                                      profile.min_confidence)
    if got:
        ordered = [dataclasses.replace(h, stage_scores={**h.stage_scores, "union_rerank": round(got[id(h)], 5)})
                   for h in ordered]
    return ordered, RERANKED if reranked else ROUND_ROBIN, warnings
