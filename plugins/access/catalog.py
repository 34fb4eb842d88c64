"""Find by words: the scoring `secret find` and `access find` share.

A word scores the best weight among the fields it appears in, half again as much when it is a
whole word there; a record's score is the sum over the query's words. Ties go by id, so the
order is stable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase

SECRET_FIELDS = {"id": 3.0, "service": 3.0, "tags": 2.0, "environment": 2.0, "kind": 2.0, "username": 1.0,
                 "url": 1.0, "notes": 1.0, "use": 1.0}
INVENTORY_FIELDS = {"id": 3.0, "name": 3.0, "aliases": 3.0, "tags": 2.0, "environment": 2.0, "kind": 2.0,
                    "cloud": 1.0, "account": 1.0, "region": 1.0, "notes": 1.0}

_STOP = {"the", "a", "an", "for", "to", "of", "and", "or", "in", "on", "my", "with"}


def query_words(query: str) -> list[str]:
    return [w for w in re.findall(r"[\w.@:/-]+", query.lower()) if w not in _STOP]


def score(record: Mapping, words: list[str], fields: Mapping[str, float]) -> float:
    total = 0.0
    for word in words:
        best = 0.0
        for name, weight in fields.items():
            value = record.get(name)
            text = (" ".join(value) if isinstance(value, list) else str(value or "")).lower()
            if word in text:
                best = max(best, weight * (1.5 if re.search(rf"\b{re.escape(word)}\b", text) else 1.0))
        total += best
    return total


def rank(records: Iterable[dict], query: str, fields: Mapping[str, float], limit: int = 10) -> list[dict]:
    """The records that match, best first, each with its `score`."""
    words = query_words(query)
    scored = [(score(r, words, fields), r) for r in records]
    ordered = sorted(scored, key=lambda x: (-x[0], x[1]["id"]))
    return [r | {"score": round(s, 2)} for s, r in ordered if s > 0][:limit]


def is_glob(query: str) -> bool:
    """A query with `*`, `?` or `[` is a shell-style pattern (`*`, `grafana-*`), not words."""
    return any(c in query for c in "*?[")


def glob(records: Iterable[dict], pattern: str, fields: Sequence[str]) -> list[dict]:
    """The records one of whose `fields` matches `pattern` as a whole (case-insensitive), in id order."""
    pattern = pattern.strip().lower()
    return sorted((r for r in records if r.get("id")
                   and any(fnmatchcase(str(r.get(f) or "").lower(), pattern) for f in fields)), key=lambda r: r["id"])
