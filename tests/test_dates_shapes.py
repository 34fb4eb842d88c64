"""Issue 47 §6, the yearless shapes round 4 left open (guards/dates/yearless.py, check.py's views): numeric
days and months without a year (`on 19/12`, `12/19 at 23:00`, `am 19.12.`, `--12-19`), a weekday beside a day
(`this Saturday the 19th`, `Sat 19th`), a German day alone (`am 19.`), digits of other scripts
(`١٩ ديسمبر`, `१९ December`) and siblings (`十二月十九日`, "the 19th of this month", "during the 19th").
Each is refused when the day a report would mean lies ahead, allowed when it lies behind; counts, fractions,
versions and the wordings the guard lets through on purpose stay allowed.

An order that reads both ways (`12/11`: 12 November or 11 December) is refused only when both readings lie
ahead: there is no locale setting to choose one, and a false refusal loses a true observation."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from muninn.guards.dates import check as dates

NOW = datetime(2026, 12, 18, 10, 0, tzinfo=UTC)      # a Friday; the 19th is a Saturday
SENTENCES = ("No bounce arrived after midnight UTC {w}.", "Verified {w}: the cert was renewed.",
             "The failover completed {w} and every check passed.")
AHEAD = {
    "numeric": ["on 19/12", "on 12/19", "until 20/12", "due 12/20", "12/19 at 23:00", "19/12 23:00",
                "am 19.12.", "am 19.12", "bis zum 20.12.", "on 19.12. at noon", "19.12. 18:30", "Sat 19/12",
                "on --12-19", "on 19-12 at 09:00"],
    "weekday and day": ["this Saturday the 19th", "Sat 19th", "on Saturday, the 19th", "Saturday 19",
                        "Sat. 19,", "Sunday the twentieth", "Sat 19 at 02:00", "saturday the 19th"],
    "German day alone": ["am 19.", "bis zum 20.", "vom 19. an"],
    "digits of other scripts": ["١٩ ديسمبر", "on ١٩ December", "१९ December", "on the १९th", "on ١٩/١٢",
                                "۱۹ دسامبر", "১৯ ডিসেম্বর", "on 19/12 (٢٣:٠٠)", "في ١٩/١٢"],
    "siblings": ["十二月十九日", "on the 19th of this month", "during the 19th", "into the 20th", "до 19.12"],
}
BEHIND = {
    "numeric": ["on 17/12", "on 12/17", "12/17 at 23:00", "am 17.12.", "am 17.12", "on 17.12. at noon",
                "on --12-17", "on 19/5", "on 5/19"],
    "weekday and day": ["Thursday the 17th", "Thu 17th", "on Wednesday, the 16th", "Thursday 17",
                        "Monday the 19th"],   # the 19th that was a Monday: October's
    "German day alone": ["am 17.", "seit dem 2."],
    "digits of other scripts": ["١٧ ديسمبر", "१७ December", "on ١٧/١٢"],
    "siblings": ["十二月十七日", "on the 17th of this month", "during the 17th"],
}
NOT_DATES = [
    "12/19 tests passed", "3/4 of the hosts", "on 2/3 of nodes", "runs on 3.11", "We are running on 22.04. Next",
    "upgraded to 19.12.", "since 2.6", "a score of 12/19", "page 19/20", "took 19.12 seconds", "on 10.0.0.1",
    "Sat 3 people waited", "on Saturday", "on Saturday evening", "tonight", "in 3 hours", "the 19th floor",
    "am 19. Dezember 2025", "on 19/12/2025", "Sat 19 Dec 2025", "am Samstag",
]


def _flat(table: dict[str, list[str]]) -> list[tuple[str, str]]:
    return [(cls, w) for cls, ws in table.items() for w in ws]


@pytest.mark.parametrize("sentence", SENTENCES)
@pytest.mark.parametrize(("cls", "wording"), _flat(AHEAD))
def test_a_day_ahead_is_refused(cls: str, wording: str, sentence: str) -> None:
    decision = dates.check_observation(sentence.format(w=wording), now=NOW)
    assert not decision.allowed and "kind='plan'" in decision.reason, (cls, decision.reason)


@pytest.mark.parametrize("sentence", SENTENCES)
@pytest.mark.parametrize(("cls", "wording"), [*_flat(BEHIND), *(("not a date", w) for w in NOT_DATES)])
def test_a_day_behind_and_what_is_no_date_are_allowed(cls: str, wording: str, sentence: str) -> None:
    decision = dates.check_observation(sentence.format(w=wording), now=NOW)
    assert decision.allowed, (cls, decision.reason)


@pytest.mark.parametrize(("now", "wording", "allowed"), [
    (NOW, "on 1/12", True),                                   # 1 December behind, 12 January ahead: allowed
    (NOW, "on 12/1", True),                                   # the same, the other order
    (datetime(2026, 12, 30, 9, tzinfo=UTC), "on 1/2", False),  # 1 February or 2 January: both ahead
    (datetime(2026, 12, 30, 9, tzinfo=UTC), "on 2/1", False),
    (datetime(2026, 3, 10, 9, tzinfo=UTC), "on 11/3", True),    # 11 March ahead, 3 November behind: allowed
])
def test_an_order_that_reads_both_ways_is_refused_only_when_both_readings_lie_ahead(
        now: datetime, wording: str, allowed: bool) -> None:
    assert dates.check_observation(f"The alerts stopped {wording}.", now=now).allowed is allowed


def test_a_plan_may_name_any_of_these_days() -> None:
    assert dates.check_observation("Cut-over on 19/12 at 23:00, Sat 19th", now=NOW, plan=True).allowed
