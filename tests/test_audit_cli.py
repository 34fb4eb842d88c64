"""`muninn audit` through the CLI: both logs as one table, every filter by class, --since in every
form it promises, --json, plain tab-separated lines in a pipe, and corrupted lines reported by number
and skipped (never a traceback). The records are written by the logs' own writers."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from muninn.cli import app
from muninn.core import config
from muninn.plugins.access import access_log
from muninn.plugins.mcp import audit, audit_view

NOW = dt.datetime.now(dt.UTC)


def _at(hours_ago: float) -> str:
    return (NOW - dt.timedelta(hours=hours_ago)).isoformat(timespec="milliseconds")


# (id, log, hours ago, who/profile, tool or action, decision or refusal)
EVENTS = [
    ("search-raven", "mcp", 0.5, "raven", "recall_search", "allow"),
    ("read-denied", "mcp", 1.5, "raven", "recall_read", "deny"),
    ("remember-wren", "mcp", 30, "wren", "recall_remember", "allow"),
    ("forget-owner", "mcp", 3, "owner-cli", "forget", "removed"),
    ("exec-raven", "access", 0.2, "mcp:raven", "access-exec", "ok"),
    ("get-refused", "access", 5, "me", "get", "refused"),
    ("find-old", "access", 24 * 10, "me", "find", "ok"),
]


def _write_logs(home: Path) -> None:
    """Each line from the real writer, then its time set to the event's (the writers stamp now)."""
    s = config.load(None)
    log = audit.AuditLog(s.paths.audit_log, lambda t: t)
    for eid, kind, _, who, tool, decision in EVENTS:
        if kind == "mcp":
            log.record(profile=who, tool=tool, arguments={"uri": f"viking://resources/x/{eid}.md"},
                       decision=decision, reason=eid, duration_ms=1.0,
                       who="me" if who == "owner-cli" else None)
        else:
            extra = {"refused": "not a terminal"} if decision == "refused" else {}
            access_log.write(s.paths.access_log, who=who, action=tool, secret_id=eid, command=eid,
                             exit_code=8 if extra else 0, **extra)
    log.close()
    times = {eid: _at(h) for eid, _, h, *_ in EVENTS}
    for path, key in ((s.paths.audit_log, "ts"), (s.paths.access_log, "time")):
        lines = [json.loads(x) for x in path.read_text().splitlines()]
        for rec in lines:
            rec[key] = times[rec.get("reason") or rec.get("id")]
        path.write_text("".join(json.dumps(r) + "\n" for r in lines))


def _ids(args: list[str]) -> set[str]:
    result = CliRunner().invoke(app, ["audit", "--json", *args])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    return {r["reason"] if r["log"] == "mcp" else r["target"] for r in rows}


ALL = {e[0] for e in EVENTS}
FILTERS = [
    ([], ALL),
    (["--log", "mcp"], {e[0] for e in EVENTS if e[1] == "mcp"}),
    (["--log", "access"], {e[0] for e in EVENTS if e[1] == "access"}),
    (["--profile", "raven"], {"search-raven", "read-denied", "exec-raven"}),
    (["--profile", "wren"], {"remember-wren"}),
    (["--profile", "me"], {"forget-owner", "get-refused", "find-old"}),
    (["--profile", "nobody"], set()),
    (["--tool", "recall_read"], {"read-denied"}),
    (["--tool", "recall_*"], {"search-raven", "read-denied", "remember-wren"}),
    (["--tool", "forget"], {"forget-owner"}),
    (["--denied"], {"read-denied", "get-refused"}),
    (["--denied", "--log", "mcp"], {"read-denied"}),
    (["--since", "1h"], {"search-raven", "exec-raven"}),
    (["--since", "2h", "--profile", "raven", "--tool", "recall_*"], {"search-raven", "read-denied"}),
    (["--since", "2d"], ALL - {"find-old"}),
    (["--since", "10m"], set()),
    (["--since", "2w"], ALL),
]


@pytest.mark.parametrize("args, expected", FILTERS, ids=[" ".join(a) or "none" for a, _ in FILTERS])
def test_filters(args: list[str], expected: set[str]) -> None:
    _write_logs(Path(os.environ["MUNINN_HOME"]))
    assert _ids(args) == expected


SINCE_FORMS = [
    ("2h", dt.timedelta(hours=2)), ("30m", dt.timedelta(minutes=30)), ("7d", dt.timedelta(days=7)),
    ("1w", dt.timedelta(weeks=1)), ("3 days ago", dt.timedelta(days=3)), ("2 hours ago", dt.timedelta(hours=2)),
    ("1 week ago", dt.timedelta(weeks=1)),
]


@pytest.mark.parametrize("value, ago", SINCE_FORMS)
def test_since_relative_forms(value: str, ago: dt.timedelta) -> None:
    got = audit_view.since(value, NOW)
    assert abs((NOW - got) - ago) < dt.timedelta(minutes=1)


@pytest.mark.parametrize("value, day", [("yesterday", 1), ("today", 0), ("Yesterday", 1)])
def test_since_day_words_start_at_midnight(value: str, day: int) -> None:
    got = audit_view.since(value, NOW)
    assert got == dt.datetime.combine(NOW.date() - dt.timedelta(days=day), dt.time(), dt.UTC)


@pytest.mark.parametrize("value, expected", [
    ("2026-11-01", dt.datetime(2026, 11, 1, tzinfo=dt.UTC)),
    ("2026-11-01T08:30:00Z", dt.datetime(2026, 11, 1, 8, 30, tzinfo=dt.UTC)),
    ("2026-11-01T08:30:00+02:00", dt.datetime(2026, 11, 1, 6, 30, tzinfo=dt.UTC)),
])
def test_since_iso_forms(value: str, expected: dt.datetime) -> None:
    assert audit_view.since(value, NOW) == expected


@pytest.mark.parametrize("value", ["nonsense", "", "   ", "2x", "soon-ish blorp", "h2", "99q", "1.5h"])
def test_since_that_cannot_be_read_is_exit_2_with_a_sentence(value: str) -> None:
    result = CliRunner().invoke(app, ["audit", "--since", value])
    # CliRunner sees the raw error; the edge (muninn/core/edge.py) turns it into its exit code.
    assert getattr(result.exception, "exit_code", None) == 2
    assert "--since" in str(result.exception) and "yesterday" in str(result.exception)


# Each class of damage a log line can take; the good lines around it still show.
CORRUPT = {
    "truncated record": b'{"ts": "2026-11-30T10:0',
    "not json": b"not json at all",
    "json array": b'[1, 2, 3]',
    "json string": b'"just a string"',
    "json number": b"42",
    "no time": b'{"profile": "raven", "tool": "recall_search"}',
    "bad time": b'{"ts": "yesterday-ish", "profile": "raven", "tool": "x", "time": "nope"}',
    "binary garbage": b"\x00\xff\xfe\x89PNG\r\x1a",
    "torn utf-8": b'{"ts": "2026-11-30T10:00:00+00:00", "tool": "\xe2\x82',
    "nul bytes": b"\x00" * 40,
}


@pytest.mark.parametrize("log", ["mcp", "access"])
@pytest.mark.parametrize("damage", list(CORRUPT))
def test_a_corrupted_line_is_reported_by_number_and_skipped(log: str, damage: str) -> None:
    _write_logs(Path(os.environ["MUNINN_HOME"]))
    s = config.load(None)
    path = s.paths.audit_log if log == "mcp" else s.paths.access_log
    lines = path.read_bytes().split(b"\n")
    lines.insert(1, CORRUPT[damage])
    path.write_bytes(b"\n".join(lines))
    before = {e[0] for e in EVENTS if e[1] == log}
    result = CliRunner().invoke(app, ["audit", "--json", "--log", log])
    assert result.exit_code == 0 and result.exception is None, result.output
    data = json.loads(result.stdout)
    assert data["skipped_lines"][log] == [2]
    assert {r["reason"] if log == "mcp" else r["target"] for r in data["rows"]} == before
    plain = CliRunner().invoke(app, ["audit", "--log", log])
    assert plain.exit_code == 0
    assert "1 corrupted line(s) skipped (line 2)" in plain.stderr and str(path) in plain.stderr


def test_no_logs_yet_is_an_empty_table_not_an_error() -> None:
    result = CliRunner().invoke(app, ["audit", "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["rows"] == []


def test_limit_keeps_the_newest() -> None:
    _write_logs(Path(os.environ["MUNINN_HOME"]))
    result = CliRunner().invoke(app, ["audit", "--json", "--limit", "2"])
    data = json.loads(result.stdout)
    assert data["total"] == len(EVENTS)
    assert [r["reason"] if r["log"] == "mcp" else r["target"] for r in data["rows"]] == ["search-raven", "exec-raven"]


def test_in_a_pipe_it_prints_tab_separated_lines_whole() -> None:
    _write_logs(Path(os.environ["MUNINN_HOME"]))
    out = subprocess.run([sys.executable, "-m", "muninn", "audit", "--log", "mcp"], capture_output=True, text=True,
                         env=os.environ.copy(), timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split("\t") == ["time", "log", "who", "tool", "decision", "target", "reason"]
    assert not set(out.stdout) & set("╭╮╰╯│─┏┓┗┛┃━┌┐└┘")
    # Every URI whole, on one line, however long the terminal would have been.
    for eid in (e[0] for e in EVENTS if e[1] == "mcp"):
        assert any(f"viking://resources/x/{eid}.md" in line.split("\t") for line in lines), eid
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("log", ["mcp", "access"])
def test_a_log_that_cannot_be_read_is_one_sentence_naming_it(log: str) -> None:
    s = config.load(None)
    path = s.paths.audit_log if log == "mcp" else s.paths.access_log
    path.mkdir(parents=True)   # a folder where the file should be
    result = CliRunner().invoke(app, ["audit", "--log", log])
    assert getattr(result.exception, "exit_code", None) == 2 and str(path) in str(result.exception)
