"""Observations cannot come from the future.

Memory is history. An agent once recorded a "verification" of something due 14 hours later,
and the thing it claimed had not happened then happened. So an observation whose time, or any
explicit date or timestamp in its text, lies after now is refused with the reason, unless the
caller marks it as a plan. So is wording that can only point after now: "tomorrow", "next Monday",
"later today", "14 hours from now".

Ambiguous wording is let through: "in 3 hours" is as often a duration ("the restore finished in
3 hours"), "tonight" may be this very night, and a bare "on Monday" or "at 18:00" is as often
the past one. A check that refused those would refuse ordinary incident write-ups.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo

# Clocks drift a little between the agent's host and ours; more than this is a claim about later.
SKEW = timedelta(minutes=5)

_MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1)}
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})?)?\b")
_DMY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]{3,9})\.?,?\s+(\d{4})\b")
_MDY = re.compile(r"\b([A-Za-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b")
_UNIT = {"minute": timedelta(minutes=1), "hour": timedelta(hours=1), "day": timedelta(days=1),
         "week": timedelta(weeks=1), "month": timedelta(days=28), "year": timedelta(days=365)}
_WORDS = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
          "seventeen eighteen nineteen twenty").split()
_COUNT = {"a": 1, "an": 1, "a few": 3, "several": 3, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
          **{w: i for i, w in enumerate(_WORDS, start=1)}}
_COUNTS = "|".join(sorted(_COUNT, key=len, reverse=True)).replace(" ", r"\s+")   # longest first: "a few"
_FROM_NOW = re.compile(rf"\b(\d+|{_COUNTS})\s+({'|'.join(_UNIT)})s?\s+from\s+now\b", re.I)
_AHEAD = re.compile(
    r"\b(?:tomorrow|(?:the\s+)?day\s+after\s+tomorrow|later\s+today|"
    r"(?:next|this\s+coming)\s+(?:week|weekend|month|quarter|year|monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday))\b", re.I)


@dataclass(frozen=True)
class DateDecision:
    allowed: bool
    reason: str


def _tz(text: str | None) -> tzinfo:
    if not text or text == "Z":
        return UTC  # a timestamp without a zone is read as UTC, the zone the audit log uses
    sign = 1 if text[0] == "+" else -1
    digits = text[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))


def _month(name: str) -> int | None:
    return _MONTHS.get(name[:3].lower())


def mentioned_times(text: str) -> list[tuple[str, datetime, bool]]:
    """(as written, the earliest moment it can mean, date-only?) for each explicit date in `text`."""
    out: list[tuple[str, datetime, bool]] = []
    for m in _ISO.finditer(text):
        y, mo, d, hh, mm, ss, tz = m.groups()
        try:
            if hh is None:
                out.append((m.group(0), datetime.combine(date(int(y), int(mo), int(d)), time(), UTC), True))
            else:
                moment = datetime(int(y), int(mo), int(d), int(hh), int(mm), int(ss or 0), tzinfo=_tz(tz))
                out.append((m.group(0), moment, False))
        except ValueError:
            continue
    for rx, order in ((_DMY, "dmy"), (_MDY, "mdy")):
        for m in rx.finditer(text):
            a, b, y = m.groups()
            day, mon = (a, b) if order == "dmy" else (b, a)
            month = _month(mon)
            if month is None:
                continue
            try:
                out.append((m.group(0), datetime.combine(date(int(y), month, int(day)), time(), UTC), True))
            except ValueError:
                continue
    return out


def ahead_words(text: str) -> list[str]:
    """Wording that can only mean a moment after the one it is written in, as written."""
    out = [m.group(0) for m in _AHEAD.finditer(text)]
    for m in _FROM_NOW.finditer(text):
        n = int(m.group(1)) if m.group(1).isdigit() else _COUNT[" ".join(m.group(1).lower().split())]
        if n * _UNIT[m.group(2).lower()] > SKEW:
            out.append(m.group(0))
    return out


def parse_when(value: str) -> datetime:
    """An ISO timestamp; naive ones are taken as UTC."""
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def check_observation(text: str, observed_at: datetime | None = None, *, plan: bool = False,
                      now: datetime | None = None) -> DateDecision:
    """Refuse an observation that claims a time after `now` (the earliest reading of each date counts)."""
    now = now or datetime.now(UTC)
    if plan:
        return DateDecision(True, "marked as a plan: future dates are allowed")
    if observed_at is not None and observed_at > now + SKEW:
        return DateDecision(False, f"observed_at {observed_at.isoformat()} is after now ({now.isoformat()}); "
                                   "record it once it has happened, or set kind='plan'")
    for written, moment, date_only in mentioned_times(text):
        # A bare date is in the future only when the whole day is: today's date is fine.
        if moment > now + SKEW:
            what = "the date" if date_only else "the time"
            return DateDecision(False, f"{what} {written!r} in the text is after now ({now:%Y-%m-%d %H:%M} UTC): "
                                       "an observation can only be recorded after it happened; "
                                       "set kind='plan' if this is a plan")
    if ahead := ahead_words(text):
        return DateDecision(False, f"{ahead[0]!r} in the text points after now: an observation can only be "
                                   "recorded after it happened; set kind='plan' if this is a plan")
    return DateDecision(True, "no date after now")
