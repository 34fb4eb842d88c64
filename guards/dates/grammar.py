"""The date forms the observation check reads besides ISO and named months (guards/dates/check.py), by class:

- numbers with any one separator, year first (`2027_03_01`, `2027:03:01`, `2027 03 01`), a two-digit
  year (`01.03.27`, zero-padded, so a version 1.3.27 is not one), a month and a year (`03/2027`);
- ISO weeks and ordinal days (`2027-W09`, `2027W091`, `KW 9/2027`, `week 9 of 2027`, `2027-060`);
- CJK dates (`2027年3月1日`, `2027年3月`, `2027년 3월 1일`);
- epoch seconds and milliseconds, only as the value of a field whose name says it is a time
  (`ts=`, `"expires":`, `exp:`, `created_at=`, `expiresAt:`, `@1803520000`) or after a word that names
  one (`epoch 1797735600`, `unix time 1797735600`, `Unix timestamp: …`): a bare 10-digit number is an id
  or a phone number as often as a time;
- ISO's basic format with a time (`20261220T0300Z`, `20261220T030000+0100`);
- quarters and halves (`Q1 2027`, `2027-Q1`, `Q1/27`, `1Q27`, `H1 2027`, `2027H2`, `1. Quartal 2027`,
  `first quarter of 2027`);
- era years: Japanese (`令和8年12月20日`, `平成31年`), Taiwan's Minguo (`民國115年12月20日`), and the Thai
  Buddhist year (`พ.ศ. 2570`, `BE 2570`, or a 25xx year after a Thai month name).

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
_BASIC = re.compile(r"(?<![\w.-])(?P<y>20\d\d)(?P<m>0[1-9]|1[0-2])(?P<d>0[1-9]|[12]\d|3[01])T(?P<hh>[01]\d|2[0-3])"
                    r"(?P<mi>[0-5]\d)(?P<ss>[0-5]\d)?(?:\.\d+)?(?P<z>Z|[+-]\d{2}:?\d{2})?(?![\w+-])")
_QUARTER = re.compile(
    rf"(?<![\w.-])(?:(?P<qh>[QH])(?P<n>[1-4])\s*(?:[/'’-]|\s+|,\s*)?\s*(?:FY\s*)?(?:{_YEAR}|(?P<yy>\d\d)(?!\d))"
    rf"|{_YEAR.replace('?P<y>', '?P<y2>')}\s*[-/ ]?\s*(?P<qh2>[QH])(?P<n2>[1-4])"
    rf"|(?P<n3>[1-4])(?P<qh3>[QH])\s*['’]?(?P<yy3>\d\d)"
    rf"|(?P<n4>[1-4])\.\s*(?P<qh4>Quartal|Halbjahr|trimestre|semestre)\s+{_YEAR.replace('?P<y>', '?P<y4>')}"
    rf"|(?P<w5>first|second|third|fourth)\s+(?P<qh5>quarter|half)\s+(?:of\s+)?{_YEAR.replace('?P<y>', '?P<y5>')})"
    r"(?![\w-])", re.I)
_ERA = re.compile(r"(?P<era>令和|平成|昭和|民國|民国|中華民國|中华民国)\s*(?P<n>\d{1,3}|元)\s*年"
                  r"(?:\s*(?P<m>1[0-2]|0?[1-9])\s*月(?:\s*(?P<d>3[01]|[12]\d|0?[1-9])\s*日)?)?")
_ERA_START = {"令和": 2018, "平成": 1988, "昭和": 1925, "民國": 1911, "民国": 1911, "中華民國": 1911, "中华民国": 1911}
_THAI_MONTHS = ("มกราคม|กุมภาพันธ์|มีนาคม|เมษายน|พฤษภาคม|มิถุนายน|กรกฎาคม|สิงหาคม|กันยายน|ตุลาคม|พฤศจิกายน|ธันวาคม|"
                r"ม\.ค\.|ก\.พ\.|มี\.ค\.|เม\.ย\.|พ\.ค\.|มิ\.ย\.|ก\.ค\.|ส\.ค\.|ก\.ย\.|ต\.ค\.|พ\.ย\.|ธ\.ค\.")
_BUDDHIST = re.compile(
    rf"(?:(?:(?P<d>3[01]|[12]\d|0?[1-9])\s*)?(?P<m>{_THAI_MONTHS})\s*(?:พ\.ศ\.\s*)?|พ\.ศ\.\s*|\bB\.?E\.?\s*)"
    r"(?P<y>2[4-6]\d\d)(?!\d)")
# A field that holds a time: ts, timestamp, time, date, exp/expires/expiry, nbf, iat, until, deadline,
# due, eta, when, at; or a name ending in one (`created_at`, `expiresAt`, `notAfter`, `start_time`).
_TIME_KEYS = ("epoch|unix|unixtime|ts|timestamp|time|datetime|date|exp|expires|expiry|expiration|nbf|iat|until|"
              "deadline|due|eta|when|at|after|before|scheduled|start|end|valid|validity")
_EPOCH = re.compile(
    r"(?:(?<![\w.])(?P<key>[A-Za-z][A-Za-z0-9_.-]{0,40}?)[\"']?\s*[:=]\s*[\"']?|(?<![\w@])@"
    r"|(?<![\w.])(?i:unix|posix|epoch)(?i:\s+(?:time(?:stamp)?|seconds|secs|ms|millis(?:econds)?))?\s*[:=]?\s*)"
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
    for m in _BASIC.finditer(text):
        try:
            moment = datetime(int(m["y"]), int(m["m"]), int(m["d"]), int(m["hh"]), int(m["mi"]), int(m["ss"] or 0),
                              tzinfo=UTC)
        except ValueError:
            continue
        if m["z"] and m["z"] != "Z":
            sign = 1 if m["z"][0] == "+" else -1
            digits = m["z"][1:].replace(":", "")
            moment -= sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        yield m.group(0), moment, False
    for m in _QUARTER.finditer(text):
        kind = next(g for g in (m["qh"], m["qh2"], m["qh3"], m["qh4"], m["qh5"]) if g).lower()
        words = {"first": 1, "second": 2, "third": 3, "fourth": 4}
        n = int(m["n"] or m["n2"] or m["n3"] or m["n4"] or words.get((m["w5"] or "").lower(), 0))
        year = m["y"] or m["y2"] or m["y4"] or m["y5"]
        year_n = int(year) if year else 2000 + int(m["yy"] or m["yy3"])
        half = kind[0] in "hs"      # H, half, Halbjahr, semestre
        if half and n > 2:
            continue
        yield m.group(0), datetime(year_n, 1 + (n - 1) * (6 if half else 3), 1, tzinfo=UTC), True
    for m in _ERA.finditer(text):
        year = _ERA_START[m["era"]] + (1 if m["n"] == "元" else int(m["n"]))
        if (day := _day(year, int(m["m"] or 1), int(m["d"] or 1))) is not None:
            yield m.group(0), day, True
    for m in _BUDDHIST.finditer(text):
        month = 1
        if m["m"]:
            names = _THAI_MONTHS.replace("\\", "").split("|")
            month = names.index(m["m"]) % 12 + 1
        if (day := _day(int(m["y"]) - 543, month, int(m["d"] or 1))) is not None:
            yield m.group(0), day, True
