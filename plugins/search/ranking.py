"""Where a search's evidence becomes order: the one module that decides it.

The stages (stages/) gather evidence: candidate lists, content, cosines and the other fusion features,
the cross-encoder's scores, dates, the inventory entries a query names. Each ordering step here is a pure
function of that evidence and the ranking profile (muninn/core/ranking_profile.py), called in pipeline
order:

    fuse           the candidate lists as one union, by reciprocal rank (what content is read for)
    linear         linear fusion: a weighted sum of z-scored features
    one_per_section  unit section: one place per section, as the part holding its best passage
    rerank_head    which candidates the cross-encoder reads
    after_rerank   its scores blended with fusion's (or fusion's order kept when it is unsure)
    with_recency   a small prior for newer facts, on scores scaled to the best
    pinned_first   an inventory entry the query names goes on top
    per_file       at most `per_file` hits of one file on the page
    union          muninn's hits and the outside memories' as one order (round robin, then one rerank)

Changing ranking is this file and the ranking profile, measured with the sealed eval (docs/search.md).
Pure functions: the lab replays them offline on recorded evidence (evals/lab/corpora/replay.py).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

from muninn.core.ranking_profile import Ranking
from muninn.plugins.search.doc import Doc
from muninn.plugins.search.types import Candidate

T = TypeVar("T")

# --- fusion ---


def fuse(lists: dict[str, list[Candidate]], ranking: Ranking) -> list[Candidate]:
    """Reciprocal rank fusion of the candidate lists; the dated list is BM25 too, and weighs as BM25."""
    weights = {"vector": ranking.vector_weight, "keyword": ranking.keyword_weight, "dated": ranking.keyword_weight}
    return rrf(lists, ranking.rrf_k, weights)


def rrf(lists: dict[str, list[Candidate]], k: int = 60, weights: dict[str, float] | None = None) -> list[Candidate]:
    """Fuse named ranked lists; each candidate keeps every stage's score and rank. Rank-based, so BM25 and
    cosine scores never need a common scale."""
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


# --- sections (ranking.unit: section) ---

Passage = tuple[str, str, float]     # (part uri, passage text, cosine)


def best_passages(scored: Iterable[tuple[str, str, str, float]]) -> dict[str, Passage]:
    """Each section's best passage from (section, part uri, passage text, cosine); the first on a tie."""
    best: dict[str, Passage] = {}
    for key, uri, text, cos in scored:
        if key not in best or cos > best[key][2]:
            best[key] = (uri, text, cos)
    return best


def one_per_section(cands: list[Candidate], section_of: Mapping[str, str],
                    passages: Mapping[str, Passage]) -> tuple[list[Candidate], dict[str, str]]:
    """Each section keeps its first place in `cands` and no other: parts of one section never take two.
    Its hit is the part that holds its best passage (the snippet shows the answer without a read).
    Returns (the sections in order, {moved-to part uri: the candidate's uri})."""
    seen: set[str] = set()
    out: list[Candidate] = []
    moved: dict[str, str] = {}
    for c in cands:
        key = section_of.get(c.uri, c.uri)
        if key in seen:
            continue
        seen.add(key)
        part = passages[key][0] if key in passages else c.uri
        if part != c.uri:
            moved[part] = c.uri
            c = Candidate(uri=part, score=c.score, stage_scores=dict(c.stage_scores), ranks=dict(c.ranks))
        out.append(c)
    return out, moved


# --- the cross-encoder ---


def rerank_head(fused: list[Candidate], ranking: Ranking,
                candidates: int) -> tuple[list[Candidate], list[Candidate]] | None:
    """(what the cross-encoder reads, what follows it in fusion order), or None when fusion's margin is
    decisive. Latency levers, off by default: `skip_margin` (the first fused candidate leads the second by
    that many z) and `gap` (only those within `gap` z of the best)."""
    head, tail = fused[:candidates], fused[candidates:]
    if not (ranking.skip_margin or ranking.gap):
        return head, tail
    z = zscores([c.score for c in head])
    ranked = sorted(z, reverse=True)
    if ranking.skip_margin and len(ranked) > 1 and ranked[0] - ranked[1] >= ranking.skip_margin:
        return None
    if ranking.gap:
        near = [zc >= ranked[0] - ranking.gap for zc in z]
        return ([c for c, n in zip(head, near, strict=True) if n],
                [c for c, n in zip(head, near, strict=True) if not n] + tail)
    return head, tail


def after_rerank(fused: list[Candidate], head: list[Candidate], tail: list[Candidate], scores: list[float],
                 features: dict[str, dict[str, float]], weights: Mapping[str, float],
                 blends: Mapping[str, float], ranking: Ranking) -> list[Candidate]:
    """The order once the cross-encoder scored `head`. `weights` and `blends` are each feature's, in the
    order of the sums. Unsure of every candidate (its best probability under min_confidence; on manuals the
    packaged ms-marco model often is), its order is noise there and fusion's is kept, fused again with
    `unsure_weights` when set; its scores stay on the hits as their relevance."""
    if max(scores, default=0.0) < ranking.min_confidence:
        if ranking.unsure_weights and features:     # linear fusion ran: fuse again, as configured
            used = {name: w for name, w in weights.items() if name in features}
            return linear(fused, features, {**used, **ranking.unsure_weights})
        return fused
    shown = {name: [features.get(name, {}).get(c.uri, 0.0) for c in head] for name in weights}
    return reorder(head, tail, blend([c.score for c in head], scores, ranking, shown, blends))


def reorder(head: list[Candidate], tail: list[Candidate], scores: list[float]) -> list[Candidate]:
    """The head in its blended order; candidates the reranker did not see stay below it, in their
    order, without stretching the range that the recency prior scales to."""
    for c, b in zip(head, scores, strict=True):
        c.score = b
    head.sort(key=lambda c: -c.score)
    floor = min((c.score for c in head), default=0.0)
    for i, c in enumerate(tail, start=1):
        c.score = floor - 1e-3 * i
    return head + tail


def blend(before: list[float], scores: list[float], ranking: Ranking, features: dict[str, list[float]],
          blends: Mapping[str, float]) -> list[float]:
    """The rerank's order over the head: in logit space, z-scored (sigmoid scores saturate, 0.0001 vs
    0.0005, and the recency prior that follows would then reorder every weak candidate by date
    alone), plus `blend` of the z-scored retrieval score and each feature's own blend of its z-score
    (features.py says why header and date are read again)."""
    total = [r + ranking.blend * f for r, f in zip(zscores([logit(s) for s in scores]), zscores(before),
                                                    strict=True)]
    for name, weight in blends.items():
        if weight and name in features:
            total = [t + weight * z for t, z in zip(total, zscores(features[name]), strict=True)]
    return total


def logit(p: float) -> float:
    """Back from a 0..1 rerank score to the model's logit, where z-scores are meaningful."""
    p = min(max(p, 1e-7), 1 - 1e-7)
    return math.log(p / (1 - p))


# --- the recency prior ---


def normalise(cands: list[Candidate]) -> None:
    """Scale to the best score (1.0 at the top), so a near-tie stays near: RRF's 1/61 and 1/62
    become 1.0 and 0.98. Lists with negative scores (raw logits) are min-max scaled instead."""
    if not cands:
        return
    lo, hi = min(c.score for c in cands), max(c.score for c in cands)
    if lo >= 0 and hi > 0:
        for c in cands:
            c.score = c.score / hi
        return
    span = hi - lo
    for c in cands:
        c.score = (c.score - lo) / span if span > 0 else 1.0


def with_recency(cands: list[Candidate], dates: dict[str, dt.datetime | None], half_life_days: float,
                 weight: float, now: dt.datetime | None = None) -> list[Candidate]:
    """Newer facts win near-ties, never against a clearly better match: scores scaled to the best, then
    `weight * 0.5 ** (age / half_life)` added (at 0.05, a fact within 5% of the best can pass it)."""
    now = now or dt.datetime.now(dt.UTC)
    normalise(cands)
    for c in cands:
        when = dates.get(c.uri)
        if when is None:
            continue
        age = max((now - when).total_seconds() / 86400.0, 0.0)
        bonus = weight * 0.5 ** (age / half_life_days)
        c.score += bonus
        c.stage_scores["recency"] = round(bonus, 5)
    return sorted(cands, key=lambda c: -c.score)


# --- inventory pins ---

PIN_SOURCE = "inventory"


def names(d: Doc) -> set[str]:
    """What names an inventory entry: its id, its title and its aliases (the fact's `names`). Tags are not
    used: they mix aliases with generic words ("postgres"), and a generic word must not pin a host."""
    fact_id = str(d.meta.get("id") or "")
    key = fact_id.split("/", 1)[-1] if fact_id.startswith(PIN_SOURCE + "/") else fact_id
    declared = d.meta.get("names")
    others = [str(n) for n in declared] if isinstance(declared, list) else []
    return {n.lower() for n in (key, d.title, *others) if n and len(n) >= 3}


def named(query: str, d: Doc) -> bool:
    """Whether the query names the entry as whole words ("bastion", "jump01.example.com")."""
    if d.source != PIN_SOURCE:
        return False
    text = query.lower()
    return any(re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w-])", text) for n in names(d))


def pinned_first(query: str, cands: list[Candidate], docs: dict[str, Doc]) -> list[Candidate]:
    """An inventory entry the query names goes on top, as an access block: asked about db01, the reader
    first needs how to reach db01, whatever else matches the words."""
    pinned = [c for c in cands if named(query, docs[c.uri])]
    for c in pinned:
        c.stage_scores["pinned"] = 1.0
    return pinned + [c for c in cands if c not in pinned]


# --- one file per page ---


def per_file(cands: list[Candidate], file_of: dict[str, str], limit: int, window: int | None = None) -> list[Candidate]:
    """At most `limit` candidates of one file in the first `window` places (the page a reader sees);
    below a full page, the rest in their order. `window=None`, or too few other files to fill the
    page, caps the whole list and drops what is over: the page never holds more than `limit` of one file.

    A request for more than the page gets the other sections of a long document back in score order:
    on the Debian handbook capping the first 4 places found more in the top 10 than capping all 10,
    with the same top 4 on every corpus (evals/results/corpora.md)."""
    seen: Counter[str] = Counter()
    out: list[Candidate] = []
    later: list[Candidate] = []
    for c in cands:
        key = file_of.get(c.uri, c.uri)
        if window is not None and len(out) >= window:
            later.append(c)
        elif seen[key] < limit:
            seen[key] += 1
            out.append(c)
        elif window is not None:
            later.append(c)
    return out + later if window is not None and len(out) >= window else out


class Weighed(Protocol):
    """What ranking reads of a fusion feature (features.Feature has more; this module does not import it)."""

    name: str

    def weight(self, r: Ranking) -> float: ...

    def blend(self, r: Ranking) -> float: ...


def feature_weights(features: Iterable[Weighed], ranking: Ranking) -> tuple[dict[str, float], dict[str, float]]:
    """(weight, blend) of each feature by name, in the order of the sums."""
    fs = list(features)
    return {f.name: f.weight(ranking) for f in fs}, {f.name: f.blend(ranking) for f in fs}


# --- one query across muninn and the outside memories ---


def union(lists: Sequence[Sequence[T]], scores: Callable[[list[T]], list[float] | None] | None = None,
          dates: Callable[[T], str | None] = lambda _: None, min_confidence: float = 0.0) -> tuple[list[T], bool]:
    """One order over separate memories, whose scores do not compare (bm25 of another database,
    an importance, muninn's fused score): round robin by rank within each (best of each, then the next
    of each, muninn's first), then, when `scores` gives the cross-encoder's probabilities for that list
    and it is sure of one (best at least `min_confidence`), that order, ties broken newest first (an
    undated hit after a dated one), then round robin. Returns (the order, whether the cross-encoder's
    stands); unsure or unavailable, round robin is final. Nothing else is applied here: each memory's
    own ranking (muninn's recency prior and per-file cap included) already ran inside it."""
    queues = [list(q) for q in lists if q]
    robin: list[T] = []
    for i in range(max((len(q) for q in queues), default=0)):
        robin += [q[i] for q in queues if i < len(q)]
    got = scores(robin) if scores is not None and robin else None
    if not got or max(got) < min_confidence:
        return robin, False
    # A date's text compares as time when ISO (the presets', muninn's); undated sorts after every date.
    keyed = [(-round(s, 6), _newest_first(dates(x)), i) for i, (x, s) in enumerate(zip(robin, got, strict=True))]
    return [robin[i] for *_, i in sorted(keyed)], True


def _newest_first(date: str | None) -> tuple[int, str]:
    return (1, "") if not date else (0, "".join(chr(0x10FFFF - ord(c)) for c in date[:32]))
