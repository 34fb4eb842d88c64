"""Dates without a year and clock times today, read as the day a report would mean (guards/dates/yearless.py):
the seed's own incident and its class are refused when that day lies ahead, the same wordings of a day
just past are allowed, and counts that look like days ("the 19th floor", "we may 20 times") are no dates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from muninn.guards.dates import check as dates

NOW = datetime(2026, 12, 18, 10, 0, tzinfo=UTC)      # fourteen hours before the 19th
SENTENCES = ("No bounce arrived after midnight UTC {w}.", "Verified {w}: the cert was renewed.",
             "The failover completed {w} and every check passed.")
AHEAD = ["on the 19th", "on the nineteenth", "by the 20th at noon", "on 19 December", "on Dec 19", "on December 19th",
         "on December the 19th", "on the 19th of December", "am 19. Dezember", "le 19 décembre", "19 декабря",
         "el 19 de diciembre", "12月19日", "12월 19일", "on Christmas Day", "on Christmas Eve", "on New Year's Eve",
         "at 23:00 tonight", "tonight at 11pm", "at 9 tonight", "this evening at 21:30 UTC", "today at 18:00 UTC"]
BEHIND = ["on the 17th", "on the seventeenth", "since the 2nd", "on 17 December", "on Dec 17", "on December 17th",
          "am 17. Dezember", "le 17 décembre", "17 декабря", "12月17日", "on Halloween", "on 19 May", "on May 19",
          "at 09:00 today", "this morning at 08:15 UTC", "on Christmas Day 2025", "on Dec 19, 2025"]
NOT_DATES = ["on the 19th floor", "after the 3rd attempt", "by the 20th request", "we may 20 times",
             "march 30 miles north", "on the 2nd of 5 hosts"]


@pytest.mark.parametrize("sentence", SENTENCES)
@pytest.mark.parametrize("wording", AHEAD)
def test_a_day_ahead_without_a_year_is_refused(wording: str, sentence: str) -> None:
    decision = dates.check_observation(sentence.format(w=wording), now=NOW)
    assert not decision.allowed and "kind='plan'" in decision.reason, decision.reason


@pytest.mark.parametrize("sentence", SENTENCES)
@pytest.mark.parametrize("wording", BEHIND + NOT_DATES)
def test_the_same_wordings_of_a_day_behind_and_counts_are_allowed(wording: str, sentence: str) -> None:
    decision = dates.check_observation(sentence.format(w=wording), now=NOW)
    assert decision.allowed, decision.reason


def test_the_seeds_incident_is_refused_until_its_day_and_allowed_after() -> None:
    text = "no bounce arrived after midnight UTC on the 19th"
    assert not dates.check_observation(text, now=NOW).allowed
    assert dates.check_observation(text, now=NOW + timedelta(hours=15)).allowed
    assert dates.check_observation(text, now=NOW, plan=True).allowed


@pytest.mark.parametrize(("now", "wording", "allowed"), [
    (datetime(2026, 1, 2, 9, tzinfo=UTC), "on Dec 30", True),          # last year's, three days ago
    (datetime(2026, 12, 30, 9, tzinfo=UTC), "on Jan 2", False),        # next year's, three days ahead
    (datetime(2026, 3, 31, 9, tzinfo=UTC), "on the 2nd", False),       # next month's
    (datetime(2026, 3, 2, 9, tzinfo=UTC), "on the 30th", True),        # last month's
    (datetime(2026, 12, 7, 9, tzinfo=UTC), "since the 28th", True),   # a report's reading: last month
])
def test_the_reading_crosses_months_and_years(now: datetime, wording: str, allowed: bool) -> None:
    assert dates.check_observation(f"The alerts stopped {wording}.", now=now).allowed is allowed
