"""Dates a query names: the forms people write, what is not a date, and the window's match and bounds."""

from __future__ import annotations

import datetime as dt

import pytest

from muninn.plugins.search import keyword, query, query_dates
from muninn.plugins.search.query_dates import Window, window

D = dt.date


@pytest.mark.parametrize("text, start, end", [
    ("What dish did Nate make on 9 November, 2022?", D(2022, 11, 9), D(2022, 11, 9)),
    ("What did Tim finish reading on 8th December, 2023?", D(2023, 12, 8), D(2023, 12, 8)),
    ("What game did Nate play on October 9, 2022?", D(2022, 10, 9), D(2022, 10, 9)),
    ("what broke on Oct 9th 2022", D(2022, 10, 9), D(2022, 10, 9)),
    ("deploys on the 3rd of June 2025", D(2025, 6, 3), D(2025, 6, 3)),
    ("what changed on 2025-06-03", D(2025, 6, 3), D(2025, 6, 3)),
    ("What achievement did John share in January 2024?", D(2024, 1, 1), D(2024, 1, 31)),
    ("incidents in Sept, 2023", D(2023, 9, 1), D(2023, 9, 30)),
    ("cost report 2024-02", D(2024, 2, 1), D(2024, 2, 29)),                 # a leap year's February
    ("Where was John between August 11 and August 15 2023?", D(2023, 8, 11), D(2023, 8, 15)),
    ("from 30 January 2023 to 2 February 2023", D(2023, 1, 30), D(2023, 2, 2)),
    ("the picture shared on December 1,2023", D(2023, 12, 1), D(2023, 12, 1)),
    ("how many outages did we have in 2023", D(2023, 1, 1), D(2023, 12, 31)),
])
def test_the_forms_people_write(text: str, start: dt.date, end: dt.date) -> None:
    assert window(text) == Window(start, end)


@pytest.mark.parametrize("text", [
    "you may 12 times restart it",          # "may" the verb, and no year to place a day in
    "how did we rotate the certificate",
    "what happened on 9 November",          # a day with no year anywhere: which year's facts?
    "on 31 February 2023",                  # not a day
    "INC-10963 2023-13-40",                 # not a date, and a ticket key is no day
    "restart 20 pods in May",               # a month with no year
    "between 3 May 2022 and 5 May 2023 and June 4",   # two years named: the bare day has no single year
])
def test_what_is_no_window(text: str) -> None:
    w = window(text)
    if text.startswith("between"):
        assert w == Window(D(2022, 5, 3), D(2023, 5, 5))    # the bare "June 4" is left out, not guessed
    else:
        assert w is None


@pytest.mark.parametrize("text, today, start, end", [
    # A month or day with no year is the latest one that has begun by today, as a person means it.
    ("what did we change in June", D(2026, 11, 30), D(2026, 6, 1), D(2026, 6, 30)),
    ("what did we change in June", D(2026, 3, 2), D(2025, 6, 1), D(2025, 6, 30)),
    ("what did we change in June", D(2026, 6, 1), D(2026, 6, 1), D(2026, 6, 30)),      # begun today
    ("the second week of November", D(2024, 1, 13), D(2023, 11, 1), D(2023, 11, 30)),
    ("what did they give him on Aug 15th", D(2024, 1, 13), D(2023, 8, 15), D(2023, 8, 15)),
    ("what did they give him on Aug 15th", D(2023, 8, 15), D(2023, 8, 15), D(2023, 8, 15)),
    # A year named in the query wins over today.
    ("between August 11 and August 15 2023", D(2026, 1, 1), D(2023, 8, 11), D(2023, 8, 15)),
])
def test_a_missing_year_is_placed_by_today(text: str, today: dt.date, start: dt.date, end: dt.date) -> None:
    assert window(text, today) == Window(start, end)
    assert query.analyse(text, today).window == Window(start, end)


@pytest.mark.parametrize("text", ["you may restart it", "march the pods to the new node", "port 2023 is open",
                                  "2023 pods restarted", "in may be down",
                                  "you may 12 times restart it"])
def test_bare_months_and_years_need_a_preposition(text: str) -> None:
    assert window(text, D(2026, 11, 30)) is None


def test_a_span_one_pattern_took_is_not_read_again() -> None:
    # "9 November, 2022" is a day; its "November, 2022" must not widen it to the whole month.
    assert window("on 9 November, 2022") == Window(D(2022, 11, 9), D(2022, 11, 9))


def test_match_is_one_inside_and_falls_off_over_the_slack() -> None:
    w = Window(D(2023, 5, 1), D(2023, 5, 1))
    at = lambda day, hour=12: dt.datetime(2023, 5, day, hour, tzinfo=dt.UTC)  # noqa: E731
    assert w.match(at(1), 1) == 1.0 and w.match(at(1, 0), 1) == 1.0 and w.match(at(1, 23), 1) == 1.0
    assert w.match(at(2), 1) == 0.5 and w.match(dt.datetime(2023, 4, 30, tzinfo=dt.UTC), 1) == 0.5
    assert w.match(at(3), 1) == 0.0 and w.match(None, 1) == 0.0
    assert w.match(at(2), slack_days=0) == 0.0 and w.match(at(3), slack_days=2) == pytest.approx(1 / 3)
    assert w.match(D(2023, 5, 1), 1) == 1.0


def test_bounds_take_the_slack_and_end_after_the_last_day() -> None:
    lo, hi = Window(D(2023, 5, 1), D(2023, 5, 31)).bounds(slack_days=1)
    assert lo == dt.datetime(2023, 4, 30, tzinfo=dt.UTC) and hi == dt.datetime(2023, 6, 2, tzinfo=dt.UTC)


def test_the_analysis_carries_the_window() -> None:
    assert query.analyse("what failed on 3 June 2025").window == Window(D(2025, 6, 3), D(2025, 6, 3))
    assert query.analyse("INC-10963").window is None


def _fact(date: str, text: str) -> str:
    return f"---\nsource: notes\ndate: \"{date}\"\n---\n# Backup run\n{text}\n"


def test_index_candidates_between_reads_any_offset(tmp_path) -> None:
    db = tmp_path / "i.sqlite"
    root = "viking://resources/log"
    keyword.index_facts(db, {
        f"{root}/a.md": _fact("2025-06-02T23:30:00+00:00", "backup failed"),
        f"{root}/b.md": _fact("2025-06-03T01:30:00+02:00", "backup failed"),     # 2 June 23:30 UTC
        f"{root}/c.md": _fact("2025-06-03T00:00:00Z", "backup failed"),
        f"{root}/d.md": _fact("2025-06-04T00:00:00+00:00", "backup failed"),     # the end is open
        f"{root}/e.md": "# Backup run\nbackup failed, undated\n",
    })
    idx = keyword.KeywordIndex(db)
    day = (dt.datetime(2025, 6, 3, tzinfo=dt.UTC), dt.datetime(2025, 6, 4, tzinfo=dt.UTC))
    got = {c.uri.rsplit("/", 1)[-1] for c in idx.candidates('"backup"', root, 10, between=day)}
    assert got == {"c.md"}
    wider = (day[0] - dt.timedelta(hours=1), day[1])
    got = {c.uri.rsplit("/", 1)[-1] for c in idx.candidates('"backup"', root, 10, between=wider)}
    assert got == {"a.md", "b.md", "c.md"}
    assert len(idx.candidates('"backup"', root, 10)) == 5          # no window: every file
    # BM25 keeps its whole-index statistics: a file scores the same inside a window as outside it.
    inside = {c.uri: c.score for c in idx.candidates('"backup"', root, 10, between=day)}
    outside = {c.uri: c.score for c in idx.candidates('"backup"', root, 10)}
    assert inside[f"{root}/c.md"] == pytest.approx(outside[f"{root}/c.md"])
    idx.close()


def test_front_matter_dates_become_utc() -> None:
    from muninn.plugins.search.doc import parse_date
    assert parse_date("2025-06-03T01:30:00+02:00") == dt.datetime(2025, 6, 2, 23, 30, tzinfo=dt.UTC)
    assert parse_date("2025-06-03T01:30:00+02:00").utcoffset() == dt.timedelta(0)
    assert parse_date("2025-06-03") == dt.datetime(2025, 6, 3, tzinfo=dt.UTC)
    assert parse_date(dt.date(2025, 6, 3)) == dt.datetime(2025, 6, 3, tzinfo=dt.UTC)
    assert parse_date("not a date") is None and parse_date(None) is None


@pytest.mark.parametrize(("text", "rest"), [
    ("What setback did Melanie face in October 2023?", "What setback did Melanie face?"),
    ("What did Nate do for Joanna on 25 May, 2022?", "What did Nate do for Joanna?"),
    ("what broke between August 11 and August 15 2023", "what broke"),
    ("On 3 June, 2023, what did we deploy?", "what did we deploy?"),
    ("restore the 2024-02-03 backup", "restore the backup"),
    ("what did we ship in June", "what did we ship"),
    ("you may want the runbook", "you may want the runbook"),      # the verb stays
    ("why did the backup fail", "why did the backup fail"),
])
def test_without_takes_the_dates_and_their_prepositions_out(text: str, rest: str) -> None:
    assert query_dates.without(text) == rest


def test_an_analysis_without_its_dates_keeps_the_window() -> None:
    a = query.analyse("What setback did Melanie face in October 2023?")
    b = a.without_dates()
    assert b.window == a.window and b.query == "What setback did Melanie face?"
    assert "october" in a.terms and "2023" in a.terms
    assert "october" not in b.terms and "2023" not in b.terms and "setback" in b.terms
    assert query.analyse("what happened on 3 June 2023").without_dates().terms == ["happened"]
    # A date inside an identifier stays: the path must still match as the phrase it is.
    path = query.analyse("why did the backup fail in logs/2024-02-03/app.log")
    assert path.window == Window(dt.date(2024, 2, 3), dt.date(2024, 2, 3))
    assert path.without_dates().identifiers == path.identifiers
    assert query.fts_query(path.without_dates()) == query.fts_query(path)
    assert query_dates.without("fix backup-2024-02-03.tar from 3 June 2024", keep=("backup-2024-02-03.tar",)) \
        == "fix backup-2024-02-03.tar"
    bare = query.analyse("3 June 2023")
    assert bare.without_dates() is bare
    undated = query.analyse("why did the backup fail")
    assert undated.without_dates() is undated
