"""How strongly a hit answers the query, on an absolute scale, beside the score that only ranks.

A hit's `score` is z-scored over one query's candidates: the best hit of a nonsense query scores as
high as the best hit of a good question. The cross-encoder's probability (sigmoid of its logit, what
the rerank stage records) is not relative: it reads the query and the fact. Raw, it is no probability
of being right, though: the packaged ms-marco model is often unsure of a right section of a manual, so a
right first hit could show relevance 0.00 beside a warning that the answer may not be in memory.

A hit's `relevance` is therefore a logistic curve over the cross-encoder's logit and how far it sits under
the query's best one, fitted on the corpora's recorded questions (evals/lab/corpora/calibrate.py,
evals/results/relevance.md): the share of hits with that evidence, among those the pipeline showed in its
top 4, that were right. A hit below the first is right far less often than a first hit with the same
score (a question has one right fact, usually first), hence the second term. Three constants per
reranker model, a positive slope and gap weight (so within a query, the order of the rerank scores is the
order of relevance). A reranker with no fitted curve keeps its raw probability.

With no reranker (`--no-rerank`, or none on disk) there is no relevance: hits carry None and no
"no strong match" is claimed either way.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from muninn.plugins.search.types import Hit

# reranker model -> (slope, gap, intercept) of relevance = sigmoid(slope * x - gap * (best - x) + intercept),
# x the hit's logit and best the highest logit the reranker gave any candidate of the query.
# CALIBRATION (written by evals/lab/corpora/calibrate.py --write)
CALIBRATION = {"cross-encoder/ms-marco-MiniLM-L-12-v2": (0.0891, 0.5519, -0.4808)}
# END CALIBRATION


def of(stage_scores: dict[str, float], reranker: str | None = None, best: float | None = None) -> float | None:
    """The hit's relevance in 0..1 from the rerank stage's probability, through `reranker`'s curve;
    `best` is the highest probability the reranker gave any candidate of the same query (default: this one)."""
    score = stage_scores.get("rerank")
    if score is None:
        return None
    if (curve := CALIBRATION.get(reranker or "")) is None:
        return round(float(score), 4)
    slope, gap, intercept = curve
    x = _logit(float(score))
    below = max(_logit(best) - x, 0.0) if best is not None else 0.0
    return round(1 / (1 + math.exp(-(slope * x - gap * below + intercept))), 4)


def best_of(candidates: Iterable[dict[str, float]]) -> float | None:
    """The highest rerank probability among these stage scores (None when none was reranked)."""
    return max((s["rerank"] for s in candidates if "rerank" in s), default=None)


def _logit(p: float) -> float:
    p = min(max(p, 1e-7), 1 - 1e-7)      # as the rerank stage reads it back to a logit
    return math.log(p / (1 - p))


def judge(hits: list[Hit], strong: float, min_score: float | None) -> tuple[list[Hit], list[str]]:
    """The hits kept by `min_score` and what to say about them: the "no strong match" warning
    when the best hit's relevance is under `strong` (search.ranking.strong_match)."""
    said: list[str] = []
    known = [h.relevance for h in hits if h.relevance is not None]
    if min_score is not None:
        if hits and not known:
            said.append("--min-score not applied: no hit has a relevance (the reranker did not run)")
        else:
            hits = [h for h in hits if h.relevance is None or h.relevance >= min_score]
    best = max(known, default=None)
    if best is not None and best < strong:
        said.append(f"no strong match: the best hit's relevance is {best:.3f}, under {strong} "
                    "(search.ranking.strong_match); what you asked may not be in memory")
    return hits, said
