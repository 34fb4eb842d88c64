"""The workspace upgrade step: a workspace made before format files is brought up on the first
command (the real CLI, in a subprocess), a newer or broken one is refused with one sentence and
its exit code, and a required step stops every command until its own command has run."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from muninn.core import format_file, upgrade
from muninn.core.upgrade import Step, UpgradeNeeded
from muninn.plugins.search import keyword

OLD_REMEMBERED = ("---\nkind: observation\nwritten_by: raven\ntrust: untrusted\n"
                  "observed_at: 2026-10-18T14:00:00+00:00\nrecorded_at: 2026-10-18T14:01:00+00:00\ntags: []\n---\n"
                  "Observation by raven (agent), 2026-10-18 14:00 UTC: resolver flaps\n\nresolver flaps again\n")
URI = "viking://resources/agents/raven/observations/2026-10/20261018T140000Z-resolver-flaps-abc123.md"


def _old_workspace(home: Path) -> Path:
    """What a workspace looked like before format 1: no format file, a sync manifest, exported facts,
    and a keyword index (layout 2) holding an observation the old remember tool wrote, undated."""
    (home / "sync").mkdir(parents=True)
    (home / "sync" / "shared.json").write_text(json.dumps({"header": {}, "files": {"a.md": "x"}}))
    (home / "exports" / "shared" / "notes").mkdir(parents=True)
    (home / "exports" / "shared" / "notes" / "a.md").write_text("---\nid: notes/a.md\n---\nlead\n\nbody\n")
    db = home / "search" / "acct.owner.sqlite"
    keyword.index_facts(db, {URI: OLD_REMEMBERED})
    with sqlite3.connect(db) as conn:      # as the old reader indexed it: no `date` key, no date
        conn.execute("UPDATE docs SET date = NULL")
        conn.execute("PRAGMA user_version = 2")
    conn.close()
    return db


def _cli(home: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MUNINN_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "muninn", *args], capture_output=True, text=True, env=env,
                          timeout=120, cwd=tmp)


def _any_command(tmp: Path) -> tuple[str, ...]:
    log = tmp / "obs.jsonl"
    log.write_text('{"ts": "2026-10-18T14:00:00Z", "tool": "dig", "input": "dig a", "output": "ok"}\n')
    return ("export", "observations", str(log), "--out", str(tmp / "out"), "--json")


def test_an_old_workspace_is_upgraded_on_the_first_command(tmp_path: Path) -> None:
    home = tmp_path / "home"
    db = _old_workspace(home)
    first = _cli(home, tmp_path, *_any_command(tmp_path))
    assert first.returncode == 0, first.stderr
    assert json.loads((home / "format.json").read_text())["format"] == upgrade.current()
    # What muninn can do alone it did: the index re-read the remembered observation's date.
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT date FROM docs").fetchone()[0] == "2026-10-18T14:00:00+00:00"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == keyword.LAYOUT
    conn.close()
    # What needs the sources and the server it named, in one sentence with the command.
    notice = [line for line in first.stderr.splitlines() if "workspace upgrade" in line]
    assert len(notice) == 2 and "`muninn export all && muninn sync all`" in notice[0]
    # Its index holds a fact remembered under the old name (title words in it): the rename is named too.
    assert "`muninn rename-remembered`" in notice[1]
    again = _cli(home, tmp_path, *_any_command(tmp_path))
    assert again.returncode == 0 and "workspace upgrade" not in again.stderr


def test_a_new_workspace_starts_in_the_current_format_without_notices(tmp_path: Path) -> None:
    home = tmp_path / "home"
    res = _cli(home, tmp_path, *_any_command(tmp_path))
    assert res.returncode == 0 and "workspace upgrade" not in res.stderr, res.stderr
    assert json.loads((home / "format.json").read_text())["format"] == upgrade.current()


@pytest.mark.parametrize("content, needle", [
    (json.dumps({"format": 999}), "newer than this muninn"),
    ("{not json", "not a workspace format file"),
    (json.dumps({"version": 1}), "not a workspace format file"),
])
def test_a_newer_or_broken_format_is_refused_in_one_sentence(tmp_path: Path, content: str, needle: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "format.json").write_text(content)
    res = _cli(home, tmp_path, *_any_command(tmp_path))
    assert res.returncode == UpgradeNeeded.exit_code, res.stderr
    assert needle in res.stderr and "Traceback" not in res.stderr
    assert len([line for line in res.stderr.strip().splitlines() if line.strip()]) == 1


def test_steps_run_in_order_and_a_required_one_stops_until_done(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "format.json").write_text(json.dumps({"format": 1}))
    ran: list[int] = []
    marker = home / "needs-reindex"
    marker.write_text("")
    steps = [Step(3, "three", apply=lambda h: ran.append(3)),
             Step(2, "indexes moved", command="muninn search-index", required=True, pending=lambda h: marker.exists()),
             Step(1, "one", apply=lambda h: ran.append(1))]
    monkeypatch.setattr(upgrade, "_STEPS", steps)
    said: list[str] = []
    with pytest.raises(UpgradeNeeded, match="run `muninn search-index`"):
        upgrade.ensure(home, said.append)
    assert ran == [] and format_file.read_format(home) == 1      # step 1 was already done; 3 waits for 2
    with pytest.raises(UpgradeNeeded):
        upgrade.ensure(home, said.append)                     # said again on every command
    marker.unlink()                                           # the command ran
    assert upgrade.ensure(home, said.append) == [] and ran == [3] and format_file.read_format(home) == upgrade.current()


def test_first_commands_started_together_all_succeed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _old_workspace(home)
    env = {**os.environ, "MUNINN_HOME": str(home)}
    args = [sys.executable, "-m", "muninn", *_any_command(tmp_path)]
    procs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
             for _ in range(4)]
    results = [(p.wait(timeout=120), p.stderr.read()) for p in procs]
    assert all(code == 0 for code, _ in results), results
    assert json.loads((home / "format.json").read_text())["format"] == upgrade.current()
    assert not list(home.glob(".format.json*"))
