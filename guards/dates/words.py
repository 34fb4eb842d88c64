"""Wording that can only point after the moment it is written in ("tmrw", "in two days", "48h from
now", "the week after next", "next Friday", "in three more days", "the coming week", "a week from
Monday", "overmorrow", `T+3d`, "завтра", "明天"), as opposed to wording a past-tense note uses too.

dateparser reads relative wording, but not as this check needs: it returns a point in time for
"finished in 3 hours" (a duration), reads "48h from now" as two days ago, and does not know "tmrw"
or "the week after next" (measured in evals/results/security_mcp.md). Here only the direction
matters, so a small grammar decides it: a forward keyword, an amount with "from now", or "in"
plus an amount that is not a duration.
"""

from __future__ import annotations

import re
from datetime import timedelta

from muninn.guards.dates.foreign import foreign_matches
from muninn.guards.dates.state import stated

# Clocks drift a little between the agent's host and ours; more than this is a claim about later.
SKEW = timedelta(minutes=5)

_UNITS: dict[str, timedelta] = {}
for _names, _size in (
    (("minute", "minutes", "min", "mins", "m"), timedelta(minutes=1)),
    (("hour", "hours", "hr", "hrs", "h"), timedelta(hours=1)),
    (("day", "days", "d"), timedelta(days=1)),
    (("week", "weeks", "wk", "wks", "w"), timedelta(weeks=1)),
    (("fortnight", "fortnights"), timedelta(weeks=2)),
    (("month", "months", "mo", "mos"), timedelta(days=28)),
    (("quarter", "quarters"), timedelta(days=89)),
    (("year", "years", "yr", "yrs", "y"), timedelta(days=365)),
):
    for _name in _names:
        _UNITS[_name] = _size
_WORDS = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
          "seventeen eighteen nineteen twenty").split()
COUNT = {"a": 1, "an": 1, "a few": 3, "a couple of": 2, "a couple": 2, "couple of": 2, "several": 3, "few": 3,
         "thirty": 30, "forty": 40, "forty-eight": 48, "fifty": 50, "sixty": 60, "seventy-two": 72,
         **{w: i for i, w in enumerate(_WORDS, start=1)}}
_COUNTS = "|".join(re.escape(c).replace(r"\ ", r"\s+") for c in sorted(COUNT, key=len, reverse=True))
# "48h", "2 days", "two weeks", "a couple of hours", "1.5 hours". A unit is glued only to digits ("48h"),
# and a counted word needs a whole unit word: "in any" is not "in an y(ear)".
_UNIT_NAMES = "|".join(sorted(_UNITS, key=len, reverse=True))
_WORD_UNITS = "|".join(sorted((u for u in _UNITS if len(u) > 1), key=len, reverse=True))
_AMOUNT = (rf"(?:(?P<n>\d+(?:\.\d+)?)\s*-?\s*(?:more\s+)?(?P<unit>{_UNIT_NAMES})"
           rf"|(?P<w>{_COUNTS})\s+(?:more\s+)?(?P<wunit>{_WORD_UNITS}))\b")
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun"
_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|december|"
           "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")
_PERIODS = rf"week|weekend|month|quarter|year|wk|mo|mth|yr|qtr|sprint|release|{_WEEKDAYS}|{_MONTHS}"
# "tomorrow" as people mistype it: tommorow, tomorow, tomorrrow, 2morow, 2moro, tmrw.
_TOMORROW = r"(?:t[o0]?|2)m+[o0]*r+[o0]*w*|tmw|tomoz"
# Other languages' "tomorrow" / "the day after tomorrow". Spanish "mañana" and German/Dutch "morgen"
# also mean "morning": not after the words that make them that ("esta mañana", "heute Morgen").
_FOREIGN = (r"demain|apr[eè]s-demain|[uü]e?bermorgen|overmorgen|domani|dopodomani|pasado\s+ma[nñ]ana|"
            r"overmorrow|(?:после)?завтра|αύριο|jutro|pojutrze|z[ií]tra|pozítří|holnap|holnapután|yar[ıi]n|"
            r"huomenna|ylihuomenna|i\s+morgen|imorgon|i\s+overmorgen|besok|lusa|kesho|"
            r"amanh[aã]|depois\s+de\s+amanh[aã]|"
            r"(?<!la\s)(?<!esta\s)(?<!de\s)(?<!por\s)(?<!cada\s)ma[nñ]ana|"
            r"(?<!heute\s)(?<!gestern\s)(?<!guten\s)(?<!goede\s)(?<!am\s)(?<!den\s)(?<!jeden\s)(?<!diesen\s)"
            r"(?<!deze\s)(?<!this\s)(?<!good\s)(?<!de\s)morgen")

# Forward keywords. "The next week" / "that next Monday" are narrative ("the next week the errors
# fell"), so "next" counts only when no article or demonstrative stands before it.
_AHEAD = re.compile(
    rf"\b(?:{_TOMORROW}|{_FOREIGN}|"
    rf"(?:the\s+)?day\s+after\s+(?:{_TOMORROW})|later\s+(?:today|tonight|this\s+(?:week|month|year))|"
    rf"(?<!the\s)(?<!that\s)(?<!this\s)(?<!a\s)(?:next|nxt)\s+(?:{_PERIODS})|"
    rf"(?:this\s+|the\s+)?(?:coming|upcoming)\s+(?:{_PERIODS})s?|"
    r"(?:the\s+)?(?:day|week|weekend|month|quarter|year)\s+after\s+next|"
    rf"(?:{_WEEKDAYS})\s+(?:of\s+)?next\s+week)\b", re.I)
_FROM_NOW = re.compile(rf"\b{_AMOUNT}\s+(?:from\s+(?:now|today|tomorrow|(?:next\s+)?(?:{_WEEKDAYS}))|hence|"
                       r"out\s+from\s+now)\b", re.I)
# now+2d, T+3d, D+1 (a day count from an event's day), T + 72 hours.
_NOW_PLUS = re.compile(rf"\b(?:now|T|D)\s*\+\s*(?:{_AMOUNT}|(?P<days>\d{{1,3}})\b)", re.I)
# Tomorrow in scripts without word spaces: Chinese, Japanese, Korean (a particle may follow directly).
_CJK_AHEAD = re.compile(r"明天|后天|後天|明日|明後日|大后天|내일|모레")
_IN = re.compile(rf"\b(?:in|within)\s+(?:(?:about|around|roughly|approximately|~)\s+)?(?:another\s+|the\s+next\s+)?"
                 rf"{_AMOUNT}", re.I)
# "in 3 hours" after one of these (within a few words) is how long something took, not when.
_DURATION_CUE = re.compile(
    r"\b(?:\w+ed|took|ran|run|done|built|went|spent|lasted|fixed|finished|completed|resolved|recovered|"
    r"drained|cleared|rebuilt|converged|failed|happened|was|were|had|been|got|came|over|only|just|all|"
    r"once|twice|times|whole|entire|total)\b", re.I)
_CUE_WINDOW = 4   # words looked at before "in"


def _amount(m: re.Match[str]) -> timedelta:
    if m.groupdict().get("days"):
        return int(m.group("days")) * _UNITS["day"]
    if m.group("n"):
        return float(m.group("n")) * _UNITS[m.group("unit").lower()]
    return COUNT[" ".join(m.group("w").lower().split())] * _UNITS[m.group("wunit").lower()]


def _is_duration(text: str, start: int, end: int) -> bool:
    """A cue word in the same clause just before "in N units", or just after it ("in 2 days the cert
    expired"): the amount says how long something took or when it happened, not a time ahead."""
    before = re.split(r"[.;:!?\n]", text[:start])[-1].split()[-_CUE_WINDOW:]
    after = re.split(r"[,.;:!?\n]", text[end:])[0].split()[:_CUE_WINDOW]   # "in 2 days, confirmed": a claim
    return bool(_DURATION_CUE.search(" ".join(before + after)))


def ahead_words(text: str) -> list[str]:
    """Wording that can only mean a moment after the one it is written in, as written; not the end of a
    state or what a past act prepared for ("expires in 30 days", "for tomorrow's review": state.py)."""
    # A state cue lets through a date and "in N units" ("expires in 30 days"), not a forward keyword or
    # `now+2d` ("Due nxt week.", "Expires now+2d." are pinned as refused since round 2): those pass only as
    # a plan or as what a past act prepared for.
    keywords = [*_AHEAD.finditer(text), *_CJK_AHEAD.finditer(text), *foreign_matches(text)]
    keywords += [m for m in _NOW_PLUS.finditer(text) if _amount(m) > SKEW]
    amounts = [m for m in _FROM_NOW.finditer(text) if _amount(m) > SKEW]
    amounts += [m for m in _IN.finditer(text) if _amount(m) > SKEW and not _is_duration(text, m.start(), m.end())]
    return [m.group(0) for m in keywords if not stated(text, m.start(), m.end(), states=False)] \
        + [m.group(0) for m in amounts if not stated(text, m.start(), m.end())]
