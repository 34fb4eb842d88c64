"""The date check, by class: every wording of a time after now is refused, past-tense wording is not.

NOW is fixed; each table row is one way people write it. The past-tense table is the other half of
the class: a check that refused those would refuse ordinary incident write-ups.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from muninn.core import accounts
from muninn.guards.dates import check as dates

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

FUTURE_DATES = [
    "2027-03-01", "2027/03/01", "2027.03.01", "2027/3/1", "01/03/2027", "03/01/2027", "1.3.2027", "01-03-2027",
    "2026-11-30T12:30:00Z", "2026-11-30 14:00+01:00", "2026-12-01",
    "1 March 2027", "1st March 2027", "the 1st of March 2027", "1st of March, 2027", "March 1, 2027",
    "March 1st, 2027", "March the 1st, 2027", "Mar. 1st 2027", "the first of March 2027",
    "the twenty-first of March 2027", "March 2027", "Dec 2026", "December 1st 2026", "1 Dec 2026",
    "1er mars 2027", "1. März 2027", "1 de marzo de 2027", "1 maart 2027", "1 marzo 2027",
]
FUTURE_WORDS = [
    "tomorrow", "Tomorrow's reindex", "tmrw", "tmr", "2moro", "the day after tomorrow", "day after tmrw",
    "later today", "later this week", "next week", "next Friday", "next fri", "next month", "next March",
    "next sprint", "this coming Friday", "this coming weekend", "the week after next", "the month after next",
    "Friday next week", "48h from now", "48 hours from now", "two weeks from today", "a week from tomorrow",
    "3 days hence", "90 min from now", "forty-eight hours from now",
]
# "in N units" is a time ahead unless the clause reads it as a duration (a past verb next to it):
# "the cert renews in two days" is refused, "the restore finished in 3 hours" is not (see PAST).
IN_AMOUNTS = ["in two days", "in 2 days", "in a couple of days", "in 48h", "in 48 hours", "in about 3 weeks",
              "in a fortnight", "in another 2 days", "in the next 2 days", "in 1.5 hours", "in 6 months", "in a year"]
IN_SENTENCES = ["Verified: the cert renews {}.", "Disk swap {}, confirmed", "{} the reindex is complete",
                "Status: green; the maintenance window opens {}"]
SENTENCES = [
    "Verified: no bounce arrived {}.", "Checked the queue, all green {}", "{} the cert is renewed, confirmed",
    "Confirmed - the disk was swapped - {}",
]
PAST = [
    "The restore finished in 3 hours.", "The rollout was done in two days.", "Migrated in 2 weeks, no downtime.",
    "It took us in total 3 days.", "We fixed it in 48h.", "In 2 days the cert expired and paging started.",
    "Two hours ago the queue drained; yesterday's deploy failed.", "Cert renewed last Monday.",
    "On Monday the alert cleared.", "On Friday we rolled back.", "The next week the error rate fell.",
    "The next day we rotated the key.", "That next Monday it happened again.", "In March the cluster was upgraded.",
    "In December we moved to the new VPN.", "Reindex ran 2 minutes from now, by our clock.",
    "Tomorrowland tickets and nextweek.example.com", "Kubernetes 1.30 upgraded; helm 3.14.2 installed.",
    "Release 2027.1 notes reviewed.", "Port 2027 was open.", "Build 20261130 shipped.", "Done on 20 Oct 2026.",
    "Incident INC-10963 on 2025-03-02 was the same.", "Deployed today, 2026-11-30.", "Resolved 29/11/2026.",
    "Mon 3 2027 is not a date.", "version 2026-13-45 is not a date", "Checked at 2026-11-30T11:30+00:00",
    "Checked at 2026-11-30T13:30+02:00", "We logged in and the next prompt appeared.",
    "Ran the 1st of March 2026 backup restore test.", "The March 2026 outage postmortem is done.",
    "In the next sprint review we showed the graphs.", "We planned it in a day and shipped it.",
]


@pytest.mark.parametrize("written", FUTURE_DATES)
@pytest.mark.parametrize("sentence", SENTENCES[:2])
def test_every_form_of_a_future_date_is_refused(written: str, sentence: str) -> None:
    decision = dates.check_observation(sentence.format(f"on {written}"), now=NOW)
    assert not decision.allowed and "after now" in decision.reason and "plan" in decision.reason


@pytest.mark.parametrize("written", FUTURE_WORDS)
@pytest.mark.parametrize("sentence", SENTENCES)
def test_every_wording_of_a_time_ahead_is_refused(written: str, sentence: str) -> None:
    decision = dates.check_observation(sentence.format(written), now=NOW)
    assert not decision.allowed, decision.reason
    assert "after now" in decision.reason and "plan" in decision.reason


@pytest.mark.parametrize("written", IN_AMOUNTS)
@pytest.mark.parametrize("sentence", IN_SENTENCES)
def test_an_amount_ahead_is_refused_where_it_is_not_a_duration(written: str, sentence: str) -> None:
    decision = dates.check_observation(sentence.format(written), now=NOW)
    assert not decision.allowed, decision.reason


@pytest.mark.parametrize("written", FUTURE_DATES[:8] + FUTURE_WORDS[:8])
def test_a_plan_may_say_it(written: str) -> None:
    assert dates.check_observation(f"Check for bounces {written}", plan=True, now=NOW).allowed


@pytest.mark.parametrize("text", PAST)
def test_past_tense_and_durations_are_not_refused(text: str) -> None:
    decision = dates.check_observation(text, now=NOW)
    assert decision.allowed, decision.reason


@pytest.mark.parametrize(("observed", "created", "allowed"), [
    (NOW - timedelta(days=10), NOW - timedelta(days=3), False),
    (NOW - timedelta(days=3, minutes=6), NOW - timedelta(days=3), False),
    (NOW - timedelta(days=3, minutes=2), NOW - timedelta(days=3), True),   # clock skew
    (NOW - timedelta(days=1), NOW - timedelta(days=3), True),
    (NOW - timedelta(days=400), None, True),                                 # no record: nothing to go on
])
def test_observed_before_the_account_existed_is_refused(observed: datetime, created: datetime | None,
                                                        allowed: bool) -> None:
    decision = dates.check_observation("Checked the queue", observed, now=NOW, not_before=created)
    assert decision.allowed is allowed, decision.reason
    if not allowed:
        assert "before this account was created" in decision.reason


def test_even_a_plan_cannot_be_observed_before_the_account(tmp_path: Path) -> None:
    decision = dates.check_observation("x", NOW - timedelta(days=9), plan=True, now=NOW,
                                       not_before=NOW - timedelta(days=3))
    assert not decision.allowed


def test_the_creation_record_keeps_the_earliest_time(tmp_path: Path) -> None:
    assert accounts.created_at(tmp_path, "home") is None
    accounts.record_created(tmp_path, "home", NOW - timedelta(days=3))
    accounts.record_created(tmp_path, "home", NOW)                  # a re-run never moves it later
    accounts.record_created(tmp_path, "work", NOW - timedelta(days=1))
    assert accounts.created_at(tmp_path, "home") == NOW - timedelta(days=3)
    assert accounts.created_at(tmp_path, "work") == NOW - timedelta(days=1)
