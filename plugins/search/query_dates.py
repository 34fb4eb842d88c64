"""Dates a query names: "on 3 June, 2023", "in January 2022", "between August 11 and August 15 2023".

A question tied to a day wants the facts written that day, and neither vectors nor BM25 see it:
to an embedder "9 November" is two tokens, to BM25 "2022" heads every file of the year. The
search pipeline turns the named window into a candidate list of its own and a fusion feature
(`date_match`). Only absolute dates count; relative ones ("last week") are `--since`'s job.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS |= {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
_MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"

# Most specific first; a span one pattern took is not read again by a later one.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("day", re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<month>[01]\d)-(?P<day>[0-3]\d)\b")),
    ("day", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?(?:\s+{_YEAR})?\b", re.I)),
    ("day", re.compile(rf"\b{_MONTH}\s+{_DAY}\b(?:,?\s+{_YEAR}\b)?", re.I)),
    ("month", re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", re.I)),
    ("month", re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<month>[01]\d)\b(?!-)")),
]


@dataclass(frozen=True)
class Window:
    """The days a query names, both ends included."""
    start: dt.date
    end: dt.date

    def match(self, when: dt.datetime | dt.date | None, slack_days: int = 1) -> float:
        """1.0 inside the window, falling linearly to 0 over `slack_days` on either side (a fact
        written the morning after, "watched it last night", is still about the day); 0.0 undated."""
        if when is None:
            return 0.0
        day = when.date() if isinstance(when, dt.datetime) else when
        off = (self.start - day).days if day < self.start else (day - self.end).days if day > self.end else 0
        return max(0.0, 1.0 - off / (slack_days + 1))

    def bounds(self, slack_days: int = 1) -> tuple[dt.datetime, dt.datetime]:
        """The window with its slack, as aware UTC datetimes [from, to): what the index filters on."""
        lo = dt.datetime.combine(self.start - dt.timedelta(days=slack_days), dt.time(), dt.UTC)
        hi = dt.datetime.combine(self.end + dt.timedelta(days=slack_days + 1), dt.time(), dt.UTC)
        return lo, hi


def _month(value: str) -> int | None:
    return int(value) if value.isdigit() else _MONTHS.get(value.lower().rstrip("."))


def window(text: str) -> Window | None:
    """The smallest window holding every absolute date `text` names, or None. A day named without a
    year ("between August 11 and August 15 2023") takes the year named elsewhere in the query; with
    no year anywhere it is left out, since guessing one would point at the wrong year's facts."""
    taken = [False] * len(text)
    found: list[tuple[str, int, int, int | None]] = []      # (kind, month, day, year)
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            if any(taken[m.start():m.end()]):
                continue
            month = _month(m.group("month"))
            if month is None or not 1 <= month <= 12:
                continue
            day = int(m.group("day")) if kind == "day" else 1
            year = m.group("year")
            found.append((kind, month, day, int(year) if year else None))
            taken[m.start():m.end()] = [True] * (m.end() - m.start())
    years = {y for *_, y in found if y is not None}
    spans: list[tuple[dt.date, dt.date]] = []
    for kind, month, day, year in found:
        if year is None:
            if len(years) != 1:
                continue
            year = next(iter(years))
        try:
            if kind == "day":
                start = end = dt.date(year, month, day)
            else:
                start = dt.date(year, month, 1)
                end = dt.date(year, month, calendar.monthrange(year, month)[1])
        except ValueError:          # 31 February: not a date, so no window from it
            continue
        spans.append((start, end))
    if not spans:
        return None
    return Window(min(s for s, _ in spans), max(e for _, e in spans))
