"""A calendar day (and maybe a time of day) written in a heading or a file name.

Journal headings and file names spell a day in many ways: `2025-05-14`, `2025/05/14`, `14.05.2025`,
`8 May, 2023`, `May 14th 2025`, `Wednesday 14 May 2025`, `1:56 pm on 8 May, 2023`, `20250514-…`.
The patterns are built from parts (year, month number or name, day with an ordinal) rather than one
per example, and every match must be a real date. Only a full day counts: a heading that says "May
2025" or "Q3" dates nothing. Numbers that only look like dates are refused by their surroundings: a
version (1.31, 2025.05.14.1), an address (10.2.20.14), a ticket (INC-2025-0514) or a range of years.
"""

from __future__ import annotations

import calendar
import datetime as dt
import os
import re

# The one month table: search/query_dates.py reads a query's dates with it too.
MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS |= {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
MONTHS["sept"] = 9
MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))   # longest first: "june" before "jun"
_NAME = rf"(?P<mname>{MONTH_NAMES})\.?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_MON = r"(?P<month>0?[1-9]|1[0-2])"
_DAY = r"(?P<day>0?[1-9]|[12]\d|3[01])"
_ORD = r"(?:st|nd|rd|th)?"
# Not inside a longer number, version, address, ticket or path: no digit, letter, dot, dash or
# slash joins the match on either side (a sentence's final dot is fine).
_BEFORE = r"(?<![\w./:-])"
_AFTER = r"(?![\w/-]|[.,:-]\d)"
_TIME = (r"(?P<hh>[01]?\d|2[0-3]):(?P<mm>[0-5]\d)(?::(?P<ss>[0-5]\d))?\s*(?P<ampm>[ap]\.?m\.?)?")
_LATER = r"(?:,?\s+(?:at\s+)?(?P<hh2>[01]?\d|2[0-3]):(?P<mm2>[0-5]\d)\s*(?P<ampm2>[ap]\.?m\.?)?(?![\w:]))?"

_PATTERNS: list[re.Pattern[str]] = [
    # year first, one separator used twice: 2025-05-14, 2025/05/14, with an optional time of day
    re.compile(rf"{_BEFORE}{_YEAR}(?P<sep>[-/]){_MON}(?P=sep){_DAY}"
               rf"(?:[T ]{_TIME}(?:\.\d+)?(?P<tz>Z|[+-]\d\d:?\d\d)?)?{_AFTER}", re.I),
    # with dots only zero-padded (2025.05.14): 2024.10.1 is a calendar-versioned release
    re.compile(rf"{_BEFORE}{_YEAR}\.(?P<month>0[1-9]|1[0-2])\.(?P<day>0[1-9]|[12]\d|3[01]){_AFTER}"),
    # day first with dots (the European way): 14.05.2025
    re.compile(rf"{_BEFORE}{_DAY}\.{_MON}\.{_YEAR}{_AFTER}"),
    # month names, day first or month first, a time of day before ("1:56 pm on 8 May, 2023") or after
    # ("8 May 2023 at 1:56 PM")
    re.compile(rf"(?:{_TIME}\s+on\s+)?{_BEFORE}{_DAY}{_ORD}\s+(?:of\s+)?{_NAME},?\s+{_YEAR}{_AFTER}{_LATER}", re.I),
    re.compile(rf"(?:{_TIME}\s+on\s+)?{_BEFORE}{_NAME}\s+{_DAY}{_ORD},?\s+{_YEAR}{_AFTER}{_LATER}", re.I),
]
# In a file name, where words are joined by - or _: a day bounded by those (2025-05-14-dns-outage,
# notes_2025_05_14), or a compact one at the start only (20250514-call, 20250514T0930-call): a
# compact number further in is as often a ticket (inc-20250514).
_IN_NAME = re.compile(r"(?:^|(?<=[-_ .]))(?P<year>(?:19|20)\d\d)(?P<sep>[-_.])(?P<month>0[1-9]|1[0-2])(?P=sep)"
                      r"(?P<day>0[1-9]|[12]\d|3[01])(?=$|[-_ .])")
_COMPACT = re.compile(r"^(?P<year>(?:19|20)\d\d)(?P<month>0[1-9]|1[0-2])(?P<day>0[1-9]|[12]\d|3[01])"
                      r"(?:T(?P<hh>[01]\d|2[0-3])(?P<mm>[0-5]\d)\d{0,2}Z?)?(?=$|[-_ .])")
_EARLIEST, _LATEST = 1970, 2100


def _build(m: re.Match[str]) -> dt.date | dt.datetime | None:
    g = {k.removesuffix("2"): v for k, v in m.groupdict().items() if v is not None}
    month = int(g["month"]) if "month" in g else MONTHS[g["mname"].lower().rstrip(".")]
    try:
        day = dt.date(int(g["year"]), month, int(g["day"]))
    except ValueError:
        return None                                   # 2025-02-30 is not a day
    if not _EARLIEST <= day.year <= _LATEST:
        return None
    if "hh" not in g:
        return day
    hour = int(g["hh"])
    if ampm := g.get("ampm"):
        if hour > 12:
            return day
        hour = hour % 12 + (12 if ampm.lower().startswith("p") else 0)
    moment = dt.datetime(day.year, day.month, day.day, hour, int(g["mm"]), int(g.get("ss", 0)))
    tz = g.get("tz")
    if tz and tz.upper() != "Z":
        sign = 1 if tz[0] == "+" else -1
        digits = tz[1:].replace(":", "")
        offset = dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        return moment.replace(tzinfo=dt.timezone(sign * offset)).astimezone(dt.UTC)
    return moment.replace(tzinfo=dt.UTC)


def find_date(text: str) -> dt.date | dt.datetime | None:
    """The first full day written in `text` (a datetime when a time of day goes with it), or None."""
    found: list[tuple[int, dt.date | dt.datetime]] = []
    for rx in _PATTERNS:
        for m in rx.finditer(text):
            if (when := _build(m)) is not None:
                found.append((m.start(), when))
                break
    return min(found, key=lambda f: f[0])[1] if found else None


def date_in_file_name(name: str) -> dt.date | dt.datetime | None:
    """A day in a file name: `2025-05-14-dns-outage.md`, `20250514-call.md`, `notes-8-may-2023.md`."""
    stem = os.path.splitext(name.rsplit("/", 1)[-1])[0]
    for rx in (_COMPACT, _IN_NAME):
        for m in rx.finditer(stem):
            if (when := _build(m)) is not None:
                return when
    # The month-name forms, with the joining dashes and underscores read as spaces.
    return find_date(re.sub(r"[-_]+", " ", stem))
