"""A small recency prior: newer facts win near-ties, never against a clearly better match.

Scores are first scaled to 0..1 within the candidate list (fusion, keyword and rerank scores
live on different scales), then `weight * 0.5 ** (age / half_life)` is added.
"""

from __future__ import annotations

import datetime as dt

from muninn.plugins.search.stages import Candidate


def normalise(cands: list[Candidate]) -> None:
    if not cands:
        return
    lo, hi = min(c.score for c in cands), max(c.score for c in cands)
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
