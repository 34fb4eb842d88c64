"""A source's date column as the fact's `date`, by class: a day stays a day, a time of day is kept (in UTC),
an offset is applied, epoch numbers in any unit are read, and anything else is no date with its reason,
never a wrong one. Through the task export too: the file says the moment, the recency prior reads it."""

from __future__ import annotations

import datetime as dt
import math
import sqlite3
from pathlib import Path

import pytest

from muninn.core import factfile
from muninn.export import pipeline
from muninn.export.dates import SourceDate, iso_day, source_date

MOMENT = dt.datetime(2025, 5, 14, 9, 30, tzinfo=dt.UTC)
EPOCH = int(MOMENT.timestamp())
AT = "2025-05-14T09:30:00Z"

DAY_ONLY = [
    ("2025-05-14", "2025-05-14"), (" 2025-05-14 ", "2025-05-14"), (dt.date(2025, 5, 14), "2025-05-14"),
    ("20250514", "2025-05-14"), ("14.05.2025", "2025-05-14"), ("May 14th 2025", "2025-05-14"),
    ("2025/05/14", "2025-05-14"), ("2025-05-14 (approx.)", "2025-05-14"), ("1970-01-02", "1970-01-02"),
    (20250514, "2025-05-14"), (20250514.0, "2025-05-14"),       # a compact day stored as a number
]
NAIVE_TIME = [   # no offset: UTC, as SQLite's CURRENT_TIMESTAMP writes it
    ("2025-05-14 09:30:00", AT), ("2025-05-14T09:30", AT), ("2025-05-14 09:30:00.987654", AT),
    (dt.datetime(2025, 5, 14, 9, 30), AT), ("14 May 2025 at 9:30 am", AT), ("9:30 am on 14 May, 2025", AT),
    ("2025-05-14 00:00:00", "2025-05-14T00:00:00Z"),    # midnight said is a time of day, not a bare day
]
AWARE = [
    ("2025-05-14T09:30:00Z", AT), ("2025-05-14T09:30:00z", AT), ("2025-05-14T11:30:00+02:00", AT),
    ("2025-05-14T04:30:00-05:00", AT), ("2025-05-14 11:30+0200", AT),
    ("2025-05-13T23:30:00-10:00", AT),                 # the day in UTC, not the day written
    (dt.datetime(2025, 5, 14, 11, 30, tzinfo=dt.timezone(dt.timedelta(hours=2))), AT),
]
EPOCHS = [
    (EPOCH, AT), (float(EPOCH), AT), (EPOCH + 0.75, AT), (EPOCH * 1000, AT), (EPOCH * 1000 + 999, AT),
    (EPOCH * 1_000_000, AT), (str(EPOCH), AT), (f"{EPOCH}.25", AT), (str(EPOCH * 1000), AT),
]
GARBAGE = [
    "soon", "N/A", "yesterday", "2025", "2025-05", "2025-02-30", "2025-13-01", "0001-01-01", "9999-12-31",
    "1900-01-01 00:00:00", True, False, 0, 1, 99, 12.5, -1, -EPOCH, 1e30, float("nan"), float("inf"), "-" + str(EPOCH),
    "0000000000", "99999999999999999999", "v1.31", "10.2.20.14", "INC-2025-0514",
]
EMPTY = [None, "", "   "]


@pytest.mark.parametrize("value, expected", DAY_ONLY + NAIVE_TIME + AWARE + EPOCHS,
                         ids=lambda v: repr(v)[:40])
def test_a_date_is_written_as_its_moment(value: object, expected: str) -> None:
    got = source_date(value)
    assert got == SourceDate(expected)
    assert iso_day(value) == expected[:10]
    # What the fact file says reads back as the same moment (the recency prior and --since read it).
    back = factfile.parse_date(got.value)
    assert back == factfile.parse_date(expected)


@pytest.mark.parametrize("value", GARBAGE, ids=lambda v: repr(v)[:40])
def test_what_is_no_date_gives_none_and_a_reason(value: object) -> None:
    got = source_date(value)
    assert got.value is None
    assert got.problem
    if isinstance(value, str) and len(value) >= 4:
        assert value not in got.problem     # the reason, never the text itself
    assert iso_day(value) is None


@pytest.mark.parametrize("value", EMPTY)
def test_an_empty_column_is_simply_undated(value: object) -> None:
    assert source_date(value) == SourceDate(None, None)


def _db(path: Path, dates: list[object]) -> Path:
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE projects (id INTEGER PRIMARY KEY, name TEXT, description TEXT);
        CREATE TABLE tasks (id INTEGER PRIMARY KEY, project_id INTEGER, title TEXT, description TEXT,
                            status TEXT, updated_at, tags TEXT);
        CREATE TABLE observations (id INTEGER PRIMARY KEY, project_id INTEGER, text TEXT, created_at, tags TEXT);
        CREATE TABLE mistakes (id INTEGER PRIMARY KEY, project_id INTEGER, title TEXT, what_happened TEXT,
                               lesson TEXT, created_at, tags TEXT);
        INSERT INTO projects VALUES (1, 'lab', 'the home lab');
    """)
    con.executemany("INSERT INTO tasks VALUES (?, 1, ?, 'do the thing', 'done', ?, 'ops')",
                    [(i, f"task {i}", d) for i, d in enumerate(dates)])
    con.commit()
    con.close()
    return path


def test_the_task_export_keeps_the_time_of_day_and_names_what_it_could_not_read(tmp_path: Path) -> None:
    cases = [v for v, _ in DAY_ONLY + NAIVE_TIME + AWARE + EPOCHS if not isinstance(v, dt.date)]
    expected = [e for v, e in DAY_ONLY + NAIVE_TIME + AWARE + EPOCHS if not isinstance(v, dt.date)]
    garbage = [g for g in GARBAGE if not isinstance(g, float) or math.isfinite(g)]   # SQLite keeps no NaN
    db = _db(tmp_path / "tasks.db", [*cases, *garbage, None])
    report = pipeline.run("tasks", db, tmp_path / "out", [])
    written = {}
    for f in (tmp_path / "out").rglob("*.md"):
        ff = factfile.parse(f.read_text())
        written[int(ff.source_path.rsplit("/", 1)[1])] = ff
    assert len(written) == len(cases) + len(garbage) + 1     # every task exported, dated or not
    for i, want in enumerate(expected):
        assert written[i].date == want, (cases[i], written[i].date)
        assert f"Dated {want}." in written[i].lead
    for i in range(len(cases), len(cases) + len(garbage)):
        assert written[i].date is None
    assert written[len(cases) + len(garbage)].date is None
    # One note per unreadable date, by source path and column, never the value itself.
    assert sorted(report.undated) == sorted(f"tasks.db#tasks/{i}" for i in range(len(cases), len(cases) + len(garbage)))
    assert all(why.startswith("updated_at: ") for why in report.undated.values())
    assert not any("soon" in why or "N/A" in why for why in report.undated.values())
