"""Dates a query names: "on 3 June, 2023", "in January 2022", "between August 11 and August 15 2023",
"in June", "in 2023".

A question tied to a day wants the facts written that day, which neither list is built to find: to
an embedder "9 November" is two tokens, and as BM25 words a month matches every file whose header
spells it, while a fact written in April that says "last month" does not spell March. So the search
pipeline turns the named window into a candidate list of its own and a fusion feature (the date
match), and the vectors and BM25 look for the rest of the question (`without`; measured in
evals/results/locomo.md, sections 7 and 8). Only calendar dates count; relative ones ("last week")
are `--since`'s job.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass

from muninn.core.datescan import MONTH_NAMES, MONTHS

_MONTH = rf"(?P<month>{MONTH_NAMES})\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"

# Most specific first; a span one pattern took is not read again by a later one.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("day", re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<month>[01]\d)-(?P<day>[0-3]\d)\b")),
    ("day", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}(?:(?:,\s*|\s+){_YEAR})?\b", re.I)),
    ("day", re.compile(rf"\b{_MONTH}\s+{_DAY}\b(?:(?:,\s*|\s+){_YEAR}\b)?", re.I)),
    ("month", re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", re.I)),
    ("month", re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<month>[01]\d)\b(?!-)")),
    # A bare month or year only after a preposition: "in May", not "you may"; "in 2023", not "port 2023".
    ("month", re.compile(rf"\b(?:in|during|of)\s+{_MONTH}(?!\w)", re.I)),   # "May" capitalised, see below
    ("year", re.compile(rf"\b(?:in|during|throughout)\s+{_YEAR}\b", re.I)),
]


@dataclass(frozen=True)
class Window:
    """The days a query names, both ends included. How many days either side still count is the
    search's `date_slack_days`, passed in: one setting, not a second default here."""
    start: dt.date
    end: dt.date

    def match(self, when: dt.datetime | dt.date | None, slack_days: int) -> float:
        """1.0 inside the window, falling linearly to 0 over `slack_days` on either side (a fact
        written the morning after, "watched it last night", is still about the day); 0.0 undated."""
        if when is None:
            return 0.0
        day = when.date() if isinstance(when, dt.datetime) else when
        off = (self.start - day).days if day < self.start else (day - self.end).days if day > self.end else 0
        return max(0.0, 1.0 - off / (slack_days + 1))

    def bounds(self, slack_days: int) -> tuple[dt.datetime, dt.datetime]:
        """The window with its slack, as aware UTC datetimes [from, to): what the index filters on."""
        lo = dt.datetime.combine(self.start - dt.timedelta(days=slack_days), dt.time(), dt.UTC)
        hi = dt.datetime.combine(self.end + dt.timedelta(days=slack_days + 1), dt.time(), dt.UTC)
        return lo, hi


def _month(value: str) -> int | None:
    return int(value) if value.isdigit() else MONTHS.get(value.lower().rstrip("."))


def _span(kind: str, year: int, month: int, day: int) -> tuple[dt.date, dt.date]:
    if kind == "day":
        return dt.date(year, month, day), dt.date(year, month, day)
    if kind == "month":
        return dt.date(year, month, 1), dt.date(year, month, calendar.monthrange(year, month)[1])
    return dt.date(year, 1, 1), dt.date(year, 12, 31)


def _named(text: str) -> list[tuple[str, int, int, int | None, slice]]:
    """Each calendar date `text` names: (kind, month, day, year or None, where it is)."""
    taken = [False] * len(text)
    found: list[tuple[str, int, int, int | None, slice]] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            if any(taken[m.start():m.end()]):
                continue
            if m.groupdict().get("month") == "may" and not m.groupdict().get("year"):
                continue            # "it may be", "you may 12 times": the verb; the month is written May
            month = _month(m.group("month")) if kind != "year" else 1
            if month is None or not 1 <= month <= 12:
                continue
            day = int(m.group("day")) if kind == "day" else 1
            year = m.group("year") if "year" in pattern.groupindex else None
            found.append((kind, month, day, int(year) if year else None, slice(m.start(), m.end())))
            taken[m.start():m.end()] = [True] * (m.end() - m.start())
    return found


def window(text: str, today: dt.date | None = None) -> Window | None:
    """The smallest window holding every calendar date `text` names, or None. A day or month named
    without a year takes the one year named elsewhere in the query ("between August 11 and August 15
    2023"); failing that, the latest that has begun by `today` ("in June" in November is this June,
    in March last June), as a person means it. With neither, it is left out rather than guessed."""
    found = _named(text)
    years = {y for _, _, _, y, _ in found if y is not None}
    spans: list[tuple[dt.date, dt.date]] = []
    for kind, month, day, year, _ in found:
        try:
            if year is None and len(years) == 1:
                year = next(iter(years))
            elif year is None and today is not None:
                year = today.year if _span(kind, today.year, month, day)[0] <= today else today.year - 1
            elif year is None:
                continue
            spans.append(_span(kind, year, month, day))
        except ValueError:          # 31 February: not a date, so no window from it
            continue
    if not spans:
        return None
    return Window(min(s for s, _ in spans), max(e for _, e in spans))


_CUT = "\0"
_LEAD = re.compile(r"\b(?:in|on|during|throughout|of|between|and|from|to)\s+" + _CUT, re.I)


def without(text: str, keep: tuple[str, ...] = ()) -> str:
    """`text` with the dates it names taken out, each with the preposition that led it in ("What
    setback did Melanie face in October 2023?" -> "What setback did Melanie face?"): once the days
    are a window, they are not words to match as well. A date inside one of the `keep` tokens (the
    query's identifiers: "logs/2024-02-03/app.log") stays, or the identifier would no longer match."""
    kept = [False] * len(text)
    for token in keep:
        for m in re.finditer(re.escape(token), text):
            kept[m.start():m.end()] = [True] * (m.end() - m.start())
    out = list(text)
    for *_, where in _named(text):
        if not any(kept[where]):
            out[where] = [_CUT] * (where.stop - where.start)
    return re.sub(r"\s*(?:\0)+", "", _LEAD.sub(_CUT, "".join(out))).strip(" ,;")
