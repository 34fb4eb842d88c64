"""Reciprocal rank fusion: rank-based, so BM25 and cosine scores never need a common scale."""

from __future__ import annotations

from muninn.plugins.search.types import Candidate


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


def linear(cands: list[Candidate], features: dict[str, dict[str, float]], weights: dict[str, float],
           default: float = 0.0) -> list[Candidate]:
    """Score every candidate by a weighted sum of z-scored features (each feature standardised over
    these candidates, so BM25's open scale and cosine's -1..1 weigh what their weights say).
    A candidate missing from a feature gets `default` there: a file BM25 does not match scores 0."""
    if not cands:
        return []
    total = [0.0] * len(cands)
    for name, values in features.items():
        weight = weights.get(name, 1.0)
        for i, z in enumerate(zscores([values.get(c.uri, default) for c in cands])):
            total[i] += weight * z
    for c, s in zip(cands, total, strict=True):
        c.score = s
        c.stage_scores["linear"] = round(s, 5)
    return sorted(cands, key=lambda c: -c.score)


def zscores(values: list[float]) -> list[float]:
    """(x - mean) / std; all zeros when the values are constant (they say nothing)."""
    if not values:
        return []
    mean = sum(values) / len(values)
    std = (sum((x - mean) ** 2 for x in values) / len(values)) ** 0.5
    return [(x - mean) / std if std > 0 else 0.0 for x in values]
