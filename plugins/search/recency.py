"""A small recency prior: newer facts win near-ties, never against a clearly better match.

Scores are first scaled relative to the best candidate (fusion, keyword and rerank scores live on
different scales), then `weight * 0.5 ** (age / half_life)` is added: with the default 0.05, a fact
within 5% of the best can move past it when it is much newer.
"""

from __future__ import annotations

import datetime as dt

from muninn.plugins.search.types import Candidate


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


def apply(cands: list[Candidate], dates: dict[str, dt.datetime | None], half_life_days: float,
          weight: float, now: dt.datetime | None = None) -> list[Candidate]:
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


_SINCE = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_since(value: str, now: dt.datetime | None = None) -> dt.datetime | None:
    """`7d`, `24h`, `30m`, `2w` or an ISO date/datetime; None when it is neither."""
    now = now or dt.datetime.now(dt.UTC)
    value = value.strip()
    if value[:-1].isdigit() and value[-1:].lower() in _SINCE:
        return now - dt.timedelta(seconds=int(value[:-1]) * _SINCE[value[-1].lower()])
    try:
        when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)
