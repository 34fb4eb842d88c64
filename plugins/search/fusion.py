"""Reciprocal rank fusion: rank-based, so BM25 and cosine scores never need a common scale."""

from __future__ import annotations

from muninn.plugins.search.stages import Candidate


def rrf(lists: dict[str, list[Candidate]], k: int = 60, weights: dict[str, float] | None = None) -> list[Candidate]:
    """Fuse named ranked lists; each candidate keeps every stage's score and rank."""
    weights = weights or {}
    fused: dict[str, Candidate] = {}
    for name, ranked in lists.items():
        weight = weights.get(name, 1.0)
        for rank, cand in enumerate(ranked, start=1):
            into = fused.setdefault(cand.uri, Candidate(uri=cand.uri))
            into.score += weight / (k + rank)
            into.stage_scores.update(cand.stage_scores)
            into.ranks[name] = rank
    out = sorted(fused.values(), key=lambda c: -c.score)
    for cand in out:
        cand.stage_scores["fusion"] = round(cand.score, 6)
    return out
