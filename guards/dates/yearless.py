"""Dates written without a year, read as the nearest such day to the moment of writing (guards/dates/check.py
refuses the observation when that day lies ahead). The seed's own incident: "no bounce arrived after
midnight UTC on the 19th", written fourteen hours before the 19th.

Classes read, each in the view the check gives (as written, NFKC, look-alikes resolved):
- a day and a month name, either order, in any language dateparser's locales spell a month in
  (`19 December`, `Dec 19`, `December the 19th`, `the 19th of December`, `am 19. Dezember`,
  `le 19 décembre`, `19 декабря`), and CJK (`12月19日`, `12월 19일`), when no year follows;
- a day of the month alone after a word that places something on a day (`on the 19th`, `by the 3rd`,
  `until the twenty-first`), not when a noun follows (`the 19th floor`, `the 3rd attempt`);
- holidays with a fixed day or Easter's (`on Christmas Day`, `New Year's Eve`, `Halloween`, `Good Friday`);
- a clock time today (`at 23:00 tonight`, `today at 9pm`, `this evening at 21:30 UTC`), in the zone the
  text names, else the host's own (the agent writes on this host).

"Nearest that makes sense for a report": a day and month is read in last year, this year and next, a day
alone in last month, this month and next; a report speaks of the past, so the latest day not after now
counts unless the next one is `PAST_FAVOUR` times nearer. "On the 19th" written on the 18th is tomorrow;
"since the 2nd" written on the 18th is this month's 2nd; "May 19" written in December is last May.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from dateutil.easter import easter

Found = tuple[str, datetime, bool]      # as written, the moment it means, date-only?
# A report speaks of the past: the day ahead counts only when it is this many times nearer than the day
# behind (evals/results/dates.md measures 1 to 4 on LoCoMo, the sample notes and observation logs).
PAST_FAVOUR = 3

_ORDINALS = ("first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
             "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth").split()
_ORDINAL = {w: i for i, w in enumerate(_ORDINALS, start=1)}
_ORDINAL.update({f"twenty-{w}": 20 + i for i, w in enumerate(_ORDINALS[:9], start=1)})
_ORDINAL.update({f"twenty {w}": 20 + i for i, w in enumerate(_ORDINALS[:9], start=1)})
_ORDINAL.update({"thirtieth": 30, "thirty-first": 31, "thirty first": 31})
_ORDINAL_WORDS = "|".join(sorted(_ORDINAL, key=len, reverse=True)).replace(" ", r"\s+")
_NUM_DAY = r"(?:0?[1-9]|[12]\d|3[01])"
_DAY = rf"(?:{_NUM_DAY}(?:st|nd|rd|th|er|e|º|\.)?|{_ORDINAL_WORDS})"
_WORD = r"[^\W\d_]{3,12}(?![^\W\d_])\.?"
_NO_YEAR = r"(?!,?\s*(?:de\s+|of\s+)?'?\d{2,4}\b)(?![\w:/-]\d)"
_DAY_MONTH = re.compile(rf"\b(?:the\s+)?(?P<d>{_DAY})\s+(?:of\s+|de\s+)?(?P<m>{_WORD}){_NO_YEAR}", re.I)
_MONTH_DAY = re.compile(rf"\b(?P<m>{_WORD})\s+(?:the\s+)?(?P<d>{_DAY})(?![\w])(?!\.\d){_NO_YEAR}", re.I)
_CJK = re.compile(r"(?<![年년\d])\s*(?P<m>1[0-2]|0?[1-9])\s*[月월]\s*(?P<d>3[01]|[12]\d|0?[1-9])\s*[日号일]")
# A day alone, after a word that puts something on a day; a following noun makes it a count ("the 3rd try").
_ON_DAY = re.compile(
    rf"\b(?:on|by|until|till|til|before|after|since|from|through|thru|due|as\s+of|starting)\s+(?:the\s+)?"
    rf"(?P<d>{_NUM_DAY}(?:st|nd|rd|th)|{_ORDINAL_WORDS})\b(?!-)", re.I)
# Nouns an ordinal counts ("the 19th floor", "after the 3rd attempt"): then it is no day of the month.
_COUNTED = frozenset("floor floors time times attempt attempts try tries retry retries run runs round rounds place "
                     "step steps item items line lines row rows column page pages chapter section percentile "
                     "century anniversary birthday generation edition version release iteration node host server "
                     "one ones person user call calls request requests reboot restart level grade inning lap "
                     "of".split())
_NEXT_WORD = re.compile(r"\s*([^\W\d_]+)")
_HOLIDAYS: dict[str, tuple[int, int] | str] = {
    "christmas day": (12, 25), "christmas eve": (12, 24), "christmas": (12, 25), "xmas": (12, 25),
    "boxing day": (12, 26), "new year's eve": (12, 31), "new years eve": (12, 31), "new year's day": (1, 1),
    "new years day": (1, 1), "valentine's day": (2, 14), "valentines day": (2, 14), "halloween": (10, 31),
    "st patrick's day": (3, 17), "st. patrick's day": (3, 17), "independence day": (7, 4),
    "easter sunday": "easter", "easter monday": "easter+1", "good friday": "easter-2", "easter": "easter",
}
_HOLIDAY = re.compile(r"\b(?:" + "|".join(re.escape(h).replace(r"\ ", r"\s+").replace("'", "['’]?")
                                          for h in sorted(_HOLIDAYS, key=len, reverse=True)) + r")\b"
                      r"(?!\s*,?\s*\d{4})", re.I)
_HOLIDAY_YEAR = re.compile(r"\s*(?:day|eve)?\s*,?\s*(?:of\s+)?'?\d{2,4}\b", re.I)
_CLOCK = r"(?P<h>2[0-3]|[01]?\d)(?:[:.h](?P<mi>[0-5]\d))?(?!\d)\s*(?P<ap>[ap]\.?m\.?)?"
_ZONE = r"(?:\s*(?P<z>UTC|GMT|Z)\b)?"
_TODAY = r"(?:tonight|today|this\s+(?:evening|afternoon|morning))"
_LATER_TODAY = re.compile(rf"\bat\s+{_CLOCK}{_ZONE}\s+{_TODAY}\b|\b{_TODAY}\s+at\s+"
                          + (_CLOCK + _ZONE).replace(">", "2>"), re.I)
_NOT_MONTHS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun "
    "and for since from until version release build ago set the day days may".split())


_VERBS = frozenset({"may", "march"})   # English months that are verbs too: a lower-case one before a number


@functools.cache
def _month_numbers() -> dict[str, int]:
    """Every month name and abbreviation dateparser's locales spell, lower case -> its month (a name
    two locales give different months is left out: it names no month for sure)."""
    from dateparser.data import language_order
    from dateparser.languages.loader import default_loader

    months = ("january february march april may june july august september october november december").split()
    out: dict[str, int] = {}
    clash: set[str] = set()
    first = ["en", "de", "fr", "es", "it", "nl", "pt"]     # their names win a clash with a rarer locale's
    settled: set[str] = set()
    for lang in [*first, *(x for x in language_order if x not in first)]:
        info = default_loader.get_locale(lang).info
        for n, month in enumerate(months, start=1):
            for name in info.get(month, []):
                key = name.lower().strip(".")
                if len(key) < 3 or (key in settled and lang not in first):
                    continue
                if out.get(key, n) != n:
                    clash.add(key)
                out[key] = n
                if lang in first:
                    settled.add(key)
    out = {k: v for k, v in out.items() if k not in clash and k not in _NOT_MONTHS}
    out["may"] = 5        # the month, when a day stands beside it ("19 May", "May 19th")
    return out


def _day_number(text: str) -> int | None:
    word = " ".join(text.lower().rstrip(".").split())
    if word in _ORDINAL:
        return _ORDINAL[word]
    digits = re.match(r"\d+", word)
    return int(digits.group(0)) if digits else None


def _safe(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


def nearest(candidates: list[date], now: datetime) -> datetime | None:
    """The reading a report means, at 00:00 UTC: the nearest past day (today included), unless the next
    day ahead is nearer by more than `PAST_FAVOUR` times (distances to each day's midday)."""
    days = sorted(datetime.combine(d, time(), UTC) for d in candidates)
    past = [d for d in days if d <= now]
    ahead = [d for d in days if d > now]
    if not past or not ahead:
        return (past or ahead or [None])[-1 if past else 0]
    before, after = past[-1], ahead[0]
    gap = lambda d: abs(d + timedelta(hours=12) - now)  # noqa: E731
    return after if gap(after) * PAST_FAVOUR < gap(before) else before


def _month_day(m: int, d: int, now: datetime) -> datetime | None:
    return nearest([x for y in (now.year - 1, now.year, now.year + 1) if (x := _safe(y, m, d))], now)


def _day_alone(d: int, now: datetime) -> datetime | None:
    # Two months back: on 2 March, "the 30th" behind is January's (February has none).
    months = [(now.year + (now.month - 1 + k) // 12, (now.month - 1 + k) % 12 + 1) for k in (-2, -1, 0, 1)]
    return nearest([x for y, m in months if (x := _safe(y, m, d))], now)


def _holiday(rule: tuple[int, int] | str, now: datetime) -> datetime | None:
    if isinstance(rule, tuple):
        return _month_day(*rule, now)
    shift = int(rule[6:] or 0)
    return nearest([easter(y) + timedelta(days=shift) for y in (now.year - 1, now.year, now.year + 1)], now)


def _later_today(m: re.Match[str], now: datetime, local: tzinfo) -> datetime | None:
    h, mi, ap, z = (next((m.group(g) for g in (f"{name}", f"{name}2") if g in m.groupdict() and m.group(g)), None)
                    for name in ("h", "mi", "ap", "z"))
    if h is None:
        return None
    hour = int(h) % 12 + (12 if ap and ap.lower().startswith("p") else 0) if ap else int(h)
    if not ap and hour < 12 and re.search(r"tonight|evening|afternoon", m.group(0), re.I):
        hour += 12            # "at 9 tonight" is 21:00
    zone = UTC if z else local
    today = now.astimezone(zone).date()
    return datetime.combine(today, time(hour, int(mi or 0)), zone).astimezone(UTC)


def yearless_times(text: str, now: datetime, local: tzinfo | None = None) -> Iterator[Found]:
    """Each date without a year in `text`, read as the nearest such day to `now` (see the module)."""
    months = _month_numbers()
    for pattern in (_DAY_MONTH, _MONTH_DAY):
        for m in pattern.finditer(text):
            if pattern is _MONTH_DAY and m.group("m").lower() in _VERBS and not m.group("m")[0].isupper():
                continue      # "we may 20 times", "march 3 miles": a verb before a count
            month, day = months.get(m.group("m").lower().rstrip(".")), _day_number(m.group("d"))
            if month and day and (moment := _month_day(month, day, now)) is not None:
                yield m.group(0), moment, True
    for m in _CJK.finditer(text):
        if text[:m.start()].rstrip()[-1:] in ("年", "년") or text[:m.start()].rstrip()[-1:].isdigit():
            continue          # the year is there: guards/dates/grammar.py reads it
        if (moment := _month_day(int(m.group("m")), int(m.group("d")), now)) is not None:
            yield m.group(0).strip(), moment, True
    for m in _ON_DAY.finditer(text):
        after = _NEXT_WORD.match(text, m.end())
        if after and text[m.end():after.start(1)].strip() == "" and after.group(1).lower() in _COUNTED:
            continue          # "the 19th floor", "after the 3rd attempt": a count, not a day
        if (day := _day_number(m.group("d"))) and (moment := _day_alone(day, now)) is not None:
            yield m.group(0), moment, True
    for m in _HOLIDAY.finditer(text):
        if _HOLIDAY_YEAR.match(text, m.end()):
            continue          # "Christmas Day 2025": a year is given
        rule = _HOLIDAYS.get(re.sub(r"[’']", "'", " ".join(m.group(0).lower().split())))
        rule = rule or _HOLIDAYS.get(" ".join(m.group(0).lower().replace("'", "").replace("’", "").split()))
        if rule is not None and (moment := _holiday(rule, now)) is not None:
            yield m.group(0), moment, True
    zone = local or datetime.now().astimezone().tzinfo or UTC
    for m in _LATER_TODAY.finditer(text):
        if (moment := _later_today(m, now, zone)) is not None:
            yield m.group(0), moment, False

