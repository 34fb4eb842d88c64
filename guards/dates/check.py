"""Observations cannot come from the future.

Memory is history. An agent once recorded a "verification" of something due 14 hours later,
and the thing it claimed had not happened then happened. So an observation whose time, or any
explicit date or timestamp in its text, title or tags, lies after now is refused with the reason,
unless the caller marks it as a plan. So is wording that can only point after now (words.py):
"tomorrow", "tmrw", "next Monday", "in two days", "48h from now", "the week after next". So is an
observation_at before the account existed: nothing was observed there then.

Dates are read in the forms people write them: ISO, `2027/03/01`, `01.03.2027` (both day-first and
month-first; the earliest reading counts), named months with ordinals, "of" and other languages and
scripts ("the 1st of March 2027", "March the 1st, 2027", "1er mars 2027", "1 марта 2027", "March
2027"), the named ones resolved by dateparser in the languages whose month names they use; and the
classes of guards/dates/grammar.py (any separator, ISO weeks, ordinal days, CJK, labelled epochs). The
text is read in three views (`views`): as written, NFKC without invisible characters, and with
look-alike letters resolved, so `２０２７-０３-０１`, `2027-\u200b03-01` and a Cyrillic `о` in `tоmorrow`
are what they show. A date without a year ("on the 19th", "Dec 19", "on Christmas Day", "12月19日") and a
clock time today ("at 23:00 tonight") are read as the day a report would mean (yearless.py) and
refused when that lies ahead. Ambiguous wording is let through: "finished in 3 hours" is a
duration, "tonight" may be this very night, and a bare "on Monday", "at 18:00" or "in March" is as
often the past one. A check that refused those would refuse ordinary incident write-ups. For the same
reason a future STATE ("valid until 2027-03-01", "expires in 30 days"), a future event a past act was for
("prepared the slides for tomorrow's review") and a plan worded as a plan are let through (state.py):
only a future EVENT reported as having happened is refused.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo

from muninn.guards.dates.grammar import grammar_times
from muninn.guards.dates.state import stated
from muninn.guards.dates.words import SKEW, ahead_words
from muninn.guards.dates.yearless import LETTER, yearless_times
from muninn.guards.known.forms import _INVISIBLE, skeleton

_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})?)?\b")
_YMD = re.compile(r"\b(\d{4})([/.-])(\d{1,2})\2(\d{1,2})\b")         # 2027/03/01, 2027-3-1
# The same date without separators, a year and month alone (the month has not begun), a two-digit year.
# Not inside a word either: a hex hash or an id (`eb20880817d3…`) holds digits that read as a day.
_COMPACT = re.compile(r"(?<![\w.-])(20\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?![\w-]|\.\d)")
_YEAR_MONTH = re.compile(r"(?<![\w.-])(20\d{2})[-/](0[1-9]|1[0-2])(?![\w-]|[./]\d)")
_SHORT_YEAR = re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})/(\d{2})(?![\d/])")
# Every dash and minus (U+2010 hyphen, en/em dash, minus sign, small and fullwidth forms) reads as '-'.
_DASHES = re.compile("[\u2010-\u2015\u2212\ufe58\ufe63\uff0d]")
_NUMERIC = re.compile(r"\b(\d{1,2})([/.-])(\d{1,2})\2(\d{4})\b")     # day-first or month-first
_ORDINALS = ("first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
             "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth").split()
_ORDINAL = {w: i for i, w in enumerate(_ORDINALS, start=1)}
_ORDINAL.update({f"twenty-{w}": 20 + i for i, w in enumerate(_ORDINALS[:9], start=1)})
_ORDINAL.update({"thirtieth": 30, "thirty-first": 31})
_DAY = rf"(?:\d{{1,2}}(?:st|nd|rd|th|er|e|º|\.)?|{'|'.join(sorted(_ORDINAL, key=len, reverse=True))})"
_NAME = rf"{LETTER}{{3,16}}\.?"
_NAMED = re.compile(
    rf"\b(?:the\s+)?{_DAY}\s+(?:of\s+|de\s+)?{_NAME},?\s+(?:de\s+)?\d{{4}}\b"      # the 1st of March 2027
    rf"|\b{_NAME}\s+(?:the\s+)?{_DAY},?\s+\d{{4}}\b"                                 # March the 1st, 2027
    rf"|\b{_NAME}\s+(?:of\s+)?\d{{4}}\b"                                               # March 2027
    rf"|\b\d{{1,2}}-{_NAME}-\d{{4}}\b", re.I)                                           # 01-Mar-2027
_NOT_MONTHS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun "
    "and for since from until version release build".split())
# dateparser's languages: more of them cost start-up time (~0.3 s each, once per process).
_LANGUAGES = ["en", "de", "fr", "es", "it", "nl", "pt"]
# The parser calls one check may make: each distinct span is parsed once (and remembered across
# checks), and a text naming more distinct dates than this is refused rather than read for minutes.
MAX_PARSES = 32


class TooManyDates(ValueError):
    """A text names more distinct dates than one check reads."""


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


@functools.cache
def _month_languages() -> dict[str, tuple[str, ...]]:
    """Every month name and abbreviation dateparser knows (its 205 locales), lower case -> the languages
    that spell a month so: a span in Russian or Greek is parsed with its own language."""
    from dateparser.data import language_order
    from dateparser.languages.loader import default_loader

    months = ("january february march april may june july august september october november december").split()
    out: dict[str, list[str]] = {}
    for lang in language_order:
        info = default_loader.get_locale(lang).info
        for month in months:
            for name in info.get(month, []):
                langs = out.setdefault(name.lower().strip("."), [])
                if lang not in langs:
                    langs.append(lang)
    return {name: tuple(langs) for name, langs in out.items()}


@functools.lru_cache(maxsize=4096)
def _named(span: str) -> datetime | None:
    """The first moment a date with a named month can mean, through dateparser; None if it is not one."""
    import dateparser  # ~1 s to import with its language data: only when a text names a month

    words = re.split(r"\s+|(?<=\d)-|-(?=\d)", span)   # `01-Mar-2027`; `twenty-first` stays one word
    if any(w.lower().strip(".,") in _NOT_MONTHS for w in words):
        return None
    table = _month_languages()
    # The languages whose month names the span uses, after the common ones (dateparser reads a language
    # only when asked: each costs start-up time once).
    spoken = [lang for w in words for lang in table.get(w.lower().strip(".,"), ())[:3]]
    if not spoken:
        return None
    languages = list(dict.fromkeys([*_LANGUAGES, *spoken]))
    text = " ".join(str(_ORDINAL.get(w.lower(), w)) for w in words if w.lower() != "the")
    parsed = dateparser.parse(text, languages=languages, settings={
        "PREFER_DAY_OF_MONTH": "first", "REQUIRE_PARTS": ["month", "year"], "RETURN_AS_TIMEZONE_AWARE": False})
    if parsed and parsed.year >= 2400:     # a Thai Buddhist year (`20 ธันวาคม 2568`): 543 ahead of ours
        parsed = parsed.replace(year=parsed.year - 543) if _day(parsed.year - 543, parsed.month, parsed.day) else None
    return parsed.replace(hour=0, minute=0, second=0, microsecond=0, tzinfo=UTC) if parsed else None


def _day(y: int, mo: int, d: int) -> datetime | None:
    try:
        return datetime.combine(date(y, mo, d), time(), UTC)
    except ValueError:
        return None


class _AsciiDigits(dict):
    """Any script's decimal digit as its ASCII one (`١٩` Arabic-Indic, `۱۹` Persian, `१९` Devanagari, `১৯`
    Bengali read as `19`), one character for one; other characters stay."""

    def __missing__(self, c: str) -> str:
        self[c] = str(unicodedata.decimal(c)) if not c.isascii() and c.isdecimal() else c
        return self[c]


_DIGITS = _AsciiDigits()


def views(text: str) -> list[str]:
    """The text as the check reads it: as written; NFKC with invisible characters (zero-width, soft
    hyphen, bidi marks, fillers) removed and every script's digits as ASCII ones, so a full-width `２０２７`,
    a `2027-\u200b03-01` or an Arabic-Indic `١٩ ديسمبر` is the date it shows; and that view with look-alike
    letters resolved to the ASCII they look like (a Cyrillic `о` in `tоmorrow`). The last is for the English
    grammar: a Cyrillic month name is read in the second."""
    plain = "".join(_DIGITS[c] for c in unicodedata.normalize("NFKC", text)
                    if c not in _INVISIBLE and unicodedata.category(c) != "Cf")
    if plain.isascii():
        return list(dict.fromkeys([text, plain]))
    table = skeleton()
    ascii_like = "".join(table.get(c, c) for c in plain)
    return list(dict.fromkeys([text, plain, ascii_like]))


def mentioned_times(text: str) -> list[tuple[str, datetime, bool]]:
    """(as written, the earliest moment it can mean, date-only?) for each explicit date in `text`, in
    every view of it (`views`)."""
    out: list[tuple[str, datetime, bool]] = []
    seen_named: set[str] = set()
    for view in views(text):
        out += _mentioned(view, seen_named)
    return out


def _mentioned(text: str, seen_named: set[str]) -> list[tuple[str, datetime, bool]]:
    out: list[tuple[str, datetime, bool]] = list(grammar_times(text))
    text = _DASHES.sub("-", text)   # one character for one: spans stay where they were
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
    for m in _YMD.finditer(text):
        if (day := _day(int(m.group(1)), int(m.group(3)), int(m.group(4)))) is not None:
            out.append((m.group(0), day, True))
    for m in _NUMERIC.finditer(text):
        a, b, y = int(m.group(1)), int(m.group(3)), int(m.group(4))
        readings = [r for r in (_day(y, b, a), _day(y, a, b)) if r is not None]
        if readings:
            out.append((m.group(0), min(readings), True))
    for m in _COMPACT.finditer(text):
        if (day := _day(int(m.group(1)), int(m.group(2)), int(m.group(3)))) is not None:
            out.append((m.group(0), day, True))
    for m in _YEAR_MONTH.finditer(text):
        out.append((m.group(0), datetime(int(m.group(1)), int(m.group(2)), 1, tzinfo=UTC), True))
    for m in _SHORT_YEAR.finditer(text):
        a, b, y = int(m.group(1)), int(m.group(2)), 2000 + int(m.group(3))
        readings = [r for r in (_day(y, b, a), _day(y, a, b)) if r is not None]
        if readings:
            out.append((m.group(0), min(readings), True))
    spans = [s for s in dict.fromkeys(m.group(0) for m in _NAMED.finditer(text)) if s not in seen_named]
    seen_named.update(spans)
    if len(seen_named) > MAX_PARSES:
        raise TooManyDates(f"the text names {len(seen_named)} different dates with a month name; one note is read "
                           f"for at most {MAX_PARSES}")
    for span in spans:
        if (day := _named(span)) is not None:
            out.append((span, day, True))
    return out


def parse_when(value: str) -> datetime:
    """An ISO timestamp; naive ones are taken as UTC."""
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _claimed(texts: list[str], written: str) -> bool:
    """Whether some occurrence of `written` is a claim, not the end of a state ("valid until 2027-03-01")
    nor what a past act prepared for (state.py)."""
    spots = [(t, i) for t in texts for i in _occurrences(t, written)]
    return not spots or any(not stated(t, i, i + len(written)) for t, i in spots)


def _occurrences(text: str, written: str) -> list[int]:
    out, i = [], text.find(written)
    while i >= 0:
        out.append(i)
        i = text.find(written, i + 1)
    return out


def check_observation(text: str, observed_at: datetime | None = None, *, plan: bool = False,
                      now: datetime | None = None, not_before: datetime | None = None) -> DateDecision:
    """Refuse an observation that claims a time after `now` (the earliest reading of each date counts),
    or an `observed_at` before `not_before` (when the account it is recorded in was created)."""
    now = now or datetime.now(UTC)
    if observed_at is not None and not_before is not None and observed_at < not_before - SKEW:
        return DateDecision(False, f"observed_at {observed_at.isoformat()} is before this account was created "
                                   f"({not_before.isoformat()}): nothing was observed here then; "
                                   "give the time it was actually observed")
    if plan:
        return DateDecision(True, "marked as a plan: future dates are allowed")
    if observed_at is not None and observed_at > now + SKEW:
        return DateDecision(False, f"observed_at {observed_at.isoformat()} is after now ({now.isoformat()}); "
                                   "record it once it has happened, or set kind='plan'")
    try:
        mentioned = mentioned_times(text)
    except TooManyDates as exc:
        return DateDecision(False, f"{exc}: split it into smaller observations, or set kind='plan'")
    seen = views(text)
    for written, moment, date_only in mentioned:
        # A bare date is in the future only when the whole day is: today's date is fine.
        if moment > now + SKEW and _claimed(seen, written):
            what = "the date" if date_only else "the time"
            return DateDecision(False, f"{what} {written!r} in the text is after now ({now:%Y-%m-%d %H:%M} UTC): "
                                       "an observation can only be recorded after it happened; "
                                       "set kind='plan' if this is a plan")
    for view in views(text):
        for written, moment, date_only in yearless_times(view, now):
            if moment > now + SKEW and _claimed([view], written):
                what = "the date" if date_only else "the time"
                return DateDecision(False, f"{what} {written!r} in the text, read as the day a report would mean "
                                           f"({moment:%Y-%m-%d %H:%M} UTC), is after now ({now:%Y-%m-%d %H:%M} UTC): "
                                           "an observation can only be recorded after it happened; "
                                           "set kind='plan' if this is a plan")
    if ahead := next((found for view in views(text) if (found := ahead_words(view))), None):
        return DateDecision(False, f"{ahead[0]!r} in the text points after now: an observation can only be "
                                   "recorded after it happened; set kind='plan' if this is a plan")
    return DateDecision(True, "no date after now")
