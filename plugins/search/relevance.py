"""How strongly a hit answers the query, on an absolute scale, beside the score that only ranks.

A hit's `score` is z-scored over one query's candidates: the best hit of a nonsense query scores as
high as the best hit of a good question. The cross-encoder's probability (sigmoid of its logit, what
the rerank stage records) is not relative: it reads the query and the fact and says how likely the
fact answers it. That is a hit's `relevance`. `evals/lab/bench_relevance.py` measured it against real
questions (the sealed ops set, LoCoMo) and stop-word, keyboard-noise and off-topic queries. The
fact's embedding cosine separated them about as well on those sets (evals/results/relevance.md), but
its scale belongs to the embedder (a threshold would not carry over to another `embed.model`), while
the cross-encoder's probability means "relevant or not" whatever the corpus.

With no reranker (`--no-rerank`, or none on disk) there is no relevance: hits carry None and no
"no strong match" is claimed either way.
"""

from __future__ import annotations

from muninn.plugins.search.types import Hit


def of(stage_scores: dict[str, float]) -> float | None:
    score = stage_scores.get("rerank")
    return None if score is None else round(float(score), 4)


def judge(hits: list[Hit], strong: float, min_score: float | None) -> tuple[list[Hit], list[str]]:
    """The hits kept by `min_score` and what to say about them: the "no strong match" warning
    when the best hit's relevance is under `strong` (search.strong_match)."""
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
                    "(search.strong_match); what you asked may not be in memory")
    return hits, said
