"""The date forms the observation check reads besides ISO and named months (guards/dates/check.py), by class:

- numbers with any one separator, year first (`2027_03_01`, `2027:03:01`, `2027 03 01`), a two-digit
  year (`01.03.27`, zero-padded, so a version 1.3.27 is not one), a month and a year (`03/2027`);
- ISO weeks and ordinal days (`2027-W09`, `2027W091`, `KW 9/2027`, `week 9 of 2027`, `2027-060`);
- CJK dates (`2027年3月1日`, `2027年3月`, `2027년 3월 1일`);
- epoch seconds and milliseconds, only as the value of a field whose name says it is a time
  (`ts=`, `"expires":`, `exp:`, `created_at=`, `expiresAt:`, `@1803520000`): a bare 10-digit number
  is an id or a phone number as often as a time.

Each gives the earliest moment it can mean (a week from its Monday, a month from its first day).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta

Found = tuple[str, datetime, bool]

_YEAR = r"(?P<y>(?:19|20|21)\d\d)"
_MON = r"(?P<m>0?[1-9]|1[0-2])"
_DAY = r"(?P<d>0?[1-9]|[12]\d|3[01])"
# Year first, one separator used twice; not inside a longer number, a dotted version or an address.
_YMD_ANY = re.compile(rf"(?<![\w.:/-]){_YEAR}(?P<s>[_:. ]|\s*[-/]\s*){_MON}(?P=s){_DAY}(?![\w]|[.:-]\d)")
# Day and month zero-padded, two-digit year: 01.03.27, 01-03-27, 01/03/27 (day first or month first).
_SHORT = re.compile(r"(?<![\w.:/-])(?P<a>\d\d)(?P<s>[./-])(?P<b>\d\d)(?P=s)(?P<y>\d\d)(?![\w]|[.:/-]\d)")
# A month and a year: 03/2027, 3.2027, 03-2027.
_MONTH_YEAR = re.compile(rf"(?<![\w.:/-]){_MON}[./-]{_YEAR}(?![\w]|[.:/-]\d)")
_WEEK = re.compile(
    rf"(?<![\w.-]){_YEAR}-?W(?P<w>0[1-9]|[1-4]\d|5[0-3])(?:-?(?P<wd>[1-7]))?(?![\w]|-\d)"
    rf"|\b(?:W|KW|CW|wk|week|woche|semaine|semana|settimana|week\s+nr\.?)\s*(?P<w2>0?[1-9]|[1-4]\d|5[0-3])"
    rf"(?:\s*(?:/|,|-|\s)\s*|\s+(?:of|in|de|del|van|von)\s+){_YEAR.replace('?P<y>', '?P<y2>')}\b", re.I)
_ORDINAL_DAY = re.compile(
    rf"(?<![\w.-]){_YEAR}-(?P<o>[0-2]\d\d|3[0-5]\d|36[0-6])(?![\w]|[.:-]\d)"
    rf"|\bday\s+(?P<o2>[1-9]\d{{0,2}})\s+(?:of|in)\s+{_YEAR.replace('?P<y>', '?P<y2>')}\b", re.I)
_CJK = re.compile(rf"{_YEAR}\s*[年년]\s*{_MON}\s*[月월](?:\s*{_DAY}\s*[日号일])?")
# A field that holds a time: ts, timestamp, time, date, exp/expires/expiry, nbf, iat, until, deadline,
# due, eta, when, at; or a name ending in one (`created_at`, `expiresAt`, `notAfter`, `start_time`).
_TIME_KEYS = ("ts|timestamp|time|datetime|date|exp|expires|expiry|expiration|nbf|iat|until|deadline|due|eta|"
              "when|at|after|before|scheduled|start|end|valid|validity")
_EPOCH = re.compile(
    r"(?:(?<![\w.])(?P<key>[A-Za-z][A-Za-z0-9_.-]{0,40}?)[\"']?\s*[:=]\s*[\"']?|(?<![\w@])@)"
    r"(?P<n>\d{10}|\d{13})(?:\.\d+)?(?![\w]|\.\d)")
_KEY_END = re.compile(rf"(?:^|[_.-])(?:{_TIME_KEYS})$|(?<=[a-z0-9])(?:{_TIME_KEYS.title()})$|^(?:{_TIME_KEYS})$")


def _day(y: int, m: int, d: int) -> datetime | None:
    try:
        return datetime.combine(date(y, m, d), time(), UTC)
    except ValueError:
        return None


def _time_key(key: str | None) -> bool:
    if key is None:
        return True   # `@1803520000`: GNU date's spelling of an epoch time
    return bool(_KEY_END.search(key) or _KEY_END.search(key.lower()))


def grammar_times(text: str) -> Iterator[Found]:
    """(as written, the earliest moment it can mean, date only?) for each date of the classes above."""
    for m in _YMD_ANY.finditer(text):
        if (day := _day(int(m["y"]), int(m["m"]), int(m["d"]))) is not None:
            yield m.group(0), day, True
    for m in _SHORT.finditer(text):
        y = 2000 + int(m["y"])
        readings = [r for r in (_day(y, int(m["b"]), int(m["a"])), _day(y, int(m["a"]), int(m["b"]))) if r]
        if readings:
            yield m.group(0), min(readings), True
    for m in _MONTH_YEAR.finditer(text):
        yield m.group(0), datetime(int(m["y"]), int(m["m"]), 1, tzinfo=UTC), True
    for m in _WEEK.finditer(text):
        year, week = int(m["y"] or m["y2"]), int(m["w"] or m["w2"])
        try:
            monday = date.fromisocalendar(year, week, int(m["wd"] or 1))
        except ValueError:
            continue
        yield m.group(0), datetime.combine(monday, time(), UTC), True
    for m in _ORDINAL_DAY.finditer(text):
        year, nth = int(m["y"] or m["y2"]), int(m["o"] or m["o2"])
        if 1 <= nth <= (366 if date(year, 12, 31).timetuple().tm_yday == 366 else 365):
            yield m.group(0), datetime(year, 1, 1, tzinfo=UTC) + timedelta(days=nth - 1), True
    for m in _CJK.finditer(text):
        day = _day(int(m["y"]), int(m["m"]), int(m["d"] or 1))
        if day is not None:
            yield m.group(0), day, True
    for m in _EPOCH.finditer(text):
        if _time_key(m["key"]):
            n = int(m["n"])
            yield m.group(0), datetime.fromtimestamp(n / 1000 if len(m["n"]) == 13 else n, UTC), False
