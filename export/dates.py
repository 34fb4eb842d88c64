"""A source's date column as a fact file's `date`: the day, and the time of day when the source has it.

The recency prior and `--since 30m` read the time of day, so a timestamp keeps it (in UTC, written by
muninn.core.factfile.format_date); a bare day stays a day. What a column may hold, by class:

- an ISO day (`2025-05-14`) or a day with a time (`2025-05-14 09:30:00`, `...T09:30Z`, `...+02:00`);
  a time without an offset is UTC, as SQLite's CURRENT_TIMESTAMP writes it;
- a date or datetime object (a driver that converts types);
- epoch seconds, milliseconds or microseconds, as a number or a string of digits;
- a day written for people (`14.05.2025`, `May 14th 2025 at 9:30`), read by muninn.core.datescan.

Anything else (`soon`, `N/A`, a boolean, a day that does not exist, a sentinel like 0001-01-01 or
9999-12-31) is no date, with the reason: never a wrong date, and never the raw text in the field.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass

from muninn.core import datescan, factfile

EARLIEST, LATEST = 1970, 2100      # outside: a sentinel or a unit mistake, not when something happened
# Epoch magnitudes: seconds until the year 5138, then milliseconds, then microseconds.
_MS, _US = 1e11, 1e14
# Below this (1973) a number is not read as an epoch time: 1 (a true stored as a number) is no date, and
# 20250514 is a compact day, read as text.
_SHORT = 1e8
# A unix time stored as text: nine or more digits before an optional fraction (a shorter run of digits,
# like 20250514, is a compact day and is read as one).
_EPOCH_TEXT = re.compile(r"-?\d{9,}(?:\.\d+)?")


@dataclass(frozen=True)
class SourceDate:
    value: str | None          # as the fact file writes it, or None
    problem: str | None = None  # why a non-empty value gave no date


def _plausible(moment: dt.datetime) -> bool:
    return EARLIEST <= moment.year <= LATEST


def _epoch(number: float) -> SourceDate:
    if not math.isfinite(number) or number <= 0:
        return SourceDate(None, "not a plausible epoch time")
    seconds = number / 1e6 if number >= _US else number / 1e3 if number >= _MS else number
    try:
        moment = dt.datetime.fromtimestamp(seconds, tz=dt.UTC)
    except (OverflowError, OSError, ValueError):
        return SourceDate(None, "an epoch time out of range")
    if not _plausible(moment):
        return SourceDate(None, f"epoch time in the year {moment.year}")
    return SourceDate(factfile.format_date(moment))


def _written(value: dt.date | dt.datetime) -> SourceDate:
    year = value.astimezone(dt.UTC).year if isinstance(value, dt.datetime) and value.tzinfo else value.year
    if not EARLIEST <= year <= LATEST:
        return SourceDate(None, f"the year {year} (a placeholder, not a date)")
    return SourceDate(factfile.format_date(value))


def source_date(value: object) -> SourceDate:
    """The fact file's `date` for one value of a source's date column (see the module doc)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return SourceDate(None)
    if isinstance(value, bool):
        return SourceDate(None, "a true/false value, not a date")
    if isinstance(value, int | float) and not (math.isfinite(value) and abs(value) < _SHORT):
        return _epoch(float(value))
    if isinstance(value, dt.date):       # datetime is a date too
        return _written(value)
    text = str(int(value)) if isinstance(value, float) and value.is_integer() else str(value).strip()
    if _EPOCH_TEXT.fullmatch(text):
        return _epoch(float(text))
    try:
        parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        parsed = None
    if parsed is not None:
        # fromisoformat reads a bare day as midnight: a day without a time of day stays a day.
        has_time = len(text) > 10 and any(c.isdigit() for c in text[10:])
        return _written(parsed if has_time else parsed.date())
    found = datescan.find_date(text)
    if found is None:
        return SourceDate(None, "not a date muninn can read")
    return _written(found)


def iso_day(value: object) -> str | None:
    """Only the day (`YYYY-MM-DD`) of `source_date`: for a path or a sentence that names the day."""
    got = source_date(value).value
    return got[:10] if got else None
