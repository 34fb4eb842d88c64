"""The search package's types: results, errors, one Protocol per pluggable part, and the validators
that run around every stage call.

A broken stage fails loudly (StageError) instead of quietly reordering nothing: a reranker that
returns 19 scores for 20 documents, or a NaN, stops the search with a sentence that names it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from muninn.core.errors import ExitCode, MuninnError


class StageError(MuninnError):
    """A stage broke its contract (wrong length, non-finite score, unknown URI)."""

    exit_code = ExitCode.SEARCH_CONTRACT


class SearchError(MuninnError):
    """Bad search input: an unparsable --since, an empty query, a batch line that is not JSON."""

    exit_code = ExitCode.BAD_INPUT


@dataclass
class Candidate:
    """One URI on its way through the stages; `stage_scores` records what each stage said."""

    uri: str
    score: float = 0.0
    stage_scores: dict[str, float] = field(default_factory=dict)
    ranks: dict[str, int] = field(default_factory=dict)


@dataclass
class Hit:
    uri: str
    title: str
    breadcrumb: str
    score: float
    stage_scores: dict[str, float]
    date: str | None
    snippet: str
    source: str
    relevance: float | None = None     # absolute: the cross-encoder's probability (search/relevance.py)

    def to_dict(self) -> dict[str, Any]:
        return {
            "uri": self.uri, "title": self.title, "breadcrumb": self.breadcrumb, "score": self.score,
            "relevance": self.relevance, "stage_scores": self.stage_scores, "date": self.date,
            "snippet": self.snippet, "source": self.source,
        }


@dataclass
class SearchResult:
    query: str
    route: str                                   # "keyword" (identifier), "hybrid", "vector"
    hits: list[Hit]
    warnings: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    briefing: str | None = None
    reranker: str | None = None                  # the model that reranked, when one did
    dates: dict[str, Any] | None = None          # the days the query named, when they were used

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "query": self.query, "route": self.route, "hits": [h.to_dict() for h in self.hits],
            "warnings": self.warnings, "timings_ms": self.timings_ms, "reranker": self.reranker,
        }
        if self.briefing is not None:
            out["briefing"] = self.briefing
        if self.dates is not None:
            out["dates"] = self.dates
        return out


# --- stage protocols ---

@runtime_checkable
class CandidateSource(Protocol):
    """Vector or keyword candidates: best first, at most `limit`, all under `target`."""

    name: str

    def candidates(self, query: str, target: str, limit: int) -> list[Candidate]: ...


@runtime_checkable
class Reranker(Protocol):
    """One score per document, higher is better, same order as `docs`."""

    name: str

    def rerank(self, query: str, docs: Sequence[str]) -> list[float]: ...


# --- validators: called by the pipeline around every stage call ---

def check_candidates(stage: str, got: object, target: str, limit: int) -> list[Candidate]:
    if not isinstance(got, list) or not all(isinstance(c, Candidate) for c in got):
        raise StageError(f"stage {stage!r} returned {type(got).__name__}, not a list of Candidate")
    if len(got) > limit:
        raise StageError(f"stage {stage!r} returned {len(got)} candidates for a limit of {limit}")
    prefix = target.rstrip("/")
    for cand in got:
        if prefix and cand.uri != prefix and not cand.uri.startswith(prefix + "/"):
            raise StageError(f"stage {stage!r} returned {cand.uri}, outside the target {target}")
        _finite(stage, cand.score)
    return got


def over_targets(stage: str, fetch: Callable[[str], object], targets: Sequence[str],
                 limit: int) -> list[Candidate]:
    """One candidate list over many folders: each folder's best `limit` (checked), merged best first and
    cut to `limit`, which is the best `limit` under any of them. A source's scores compare across
    folders (one embedding model's cosines, one index's BM25 statistics), so the union is ranked once."""
    if len(targets) == 1:
        return check_candidates(stage, fetch(targets[0]), targets[0], limit)
    merged: dict[str, Candidate] = {}
    for target in targets:
        for cand in check_candidates(stage, fetch(target), target, limit):
            merged.setdefault(cand.uri, cand)
    return sorted(merged.values(), key=lambda c: -c.score)[:limit]


def check_scores(stage: str, scores: object, n: int) -> list[float]:
    try:
        values = [float(s) for s in scores]  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise StageError(f"stage {stage!r} returned scores that are not numbers: {str(scores)[:80]}") from None
    if len(values) != n:
        raise StageError(f"stage {stage!r} returned {len(values)} scores for {n} documents")
    for value in values:
        _finite(stage, value)
    return values


def _finite(stage: str, value: float) -> None:
    if not math.isfinite(value):
        raise StageError(f"stage {stage!r} produced a non-finite score ({value})",
                         fix="check the model weights or the endpoint's output")
