"""What a nightly report keeps of redaction: counts by rule, by secret id and by source, and the command
that lists every redaction (`muninn export all --json`). Never a value, a matched text, a file, a line or a
fingerprint, and a size that does not grow with the number of redactions. `nightly --last` (table and
--json) reads it back. The jobs run for real; only their sync to the server (the process edge) is left out."""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from muninn.core import config
from muninn.export.redaction_report import FULL_LIST
from muninn.nightly import runner
from muninn.nightly.jobs import refresh

KNOWN = {"Zq8vN3kT5pW2rX7m": "nas-admin", "Hb4tY9mQ2vL7cK3w": "chat-bot-token"}
PATTERN_ONLY = {   # in no secrets file: caught by pattern alone
    "github": "ghp_R8x2Lq9Zt4Vw7Yp1Bn6Mk3Hs5Jd0Fc2Gx8Qa",
    "auth": "Xk29fLq0Zr7TnB4wPs8v",
    "aws": "AKIAQ7XK2M4N6P8R0T2V",
}
LONG = "Restart the worker with systemctl after the deploy finishes, then check the health page. " * 3


def _note(i: int) -> str:
    nas, chat = KNOWN
    return (f"# Worker {i}\n\nThe NAS login is {nas} and the bot posts with {chat}.\n\n"
            f"Push with {PATTERN_ONLY['github']} or curl -H 'Authorization: Bearer {PATTERN_ONLY['auth']}'.\n\n"
            f"aws_access_key_id = {PATTERN_ONLY['aws']}\n")


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def _home(tmp_path: Path, notes: int) -> Path:
    """A workspace with a notes source of `notes` files (each: two known values, three pattern hits) and
    a repository source (pattern hits only: a known value would drop the file, not redact it)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "secrets.yaml").write_text(yaml.safe_dump([{"id": i, "value": v} for v, i in KNOWN.items()]))
    folder = tmp_path / "notes"
    folder.mkdir()
    for i in range(notes):
        (folder / f"worker-{i:03d}.md").write_text(_note(i))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text(f"# Service\n\n{LONG}\n\nDeploy with {PATTERN_ONLY['github']}.\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "files")
    cfg = {"home": str(tmp_path / "home"), "export": {"secret_files": [str(tmp_path / "secrets.yaml")]},
           "sources": [{"kind": "notes", "path": str(folder), "area": "viking://resources/shared"},
                       {"kind": "repo", "path": str(repo), "area": "viking://resources/code", "name": "svc"}]}
    (tmp_path / "muninn.yaml").write_text(yaml.safe_dump(cfg))
    return tmp_path / "muninn.yaml"


@pytest.fixture
def night(monkeypatch: pytest.MonkeyPatch, isolated_keyring: Path):
    """Runs refresh and snapshot on a config, saves the report; the areas they would sync are recorded."""
    synced: list[str] = []
    monkeypatch.setattr(refresh, "sync_areas", lambda s, areas, data, failures: synced.extend(areas))

    def run(cfg: Path) -> tuple[Path, dict[str, Any]]:
        settings = config.load(cfg)
        results = runner.run(settings, ["refresh", "snapshot"])
        assert [r.status for r in results] == ["ok", "ok"], [(r.name, r.detail) for r in results]
        assert set(synced) >= {"viking://resources/shared", "viking://resources/code"}
        path = runner.save(settings, results)
        return path, json.loads(path.read_text())

    return run


def _jobs(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {j["name"]: j["data"] for j in report["jobs"]}


def _full_list(run_muninn, cfg: Path) -> dict[str, list[dict[str, Any]]]:
    """What the report points to: every redaction of every source, as `muninn export all --json` lists it."""
    ended = run_muninn(["--config", str(cfg), *FULL_LIST.split()[1:]])
    assert ended.exit_code == 0, ended.stderr
    return {name: r["redactions"] for name, r in json.loads(ended.stdout).items()}


def test_the_report_counts_by_rule_secret_and_source_as_the_full_list_does(tmp_path: Path, night,
                                                                         run_muninn) -> None:
    cfg = _home(tmp_path, notes=6)
    _, report = night(cfg)
    full = _full_list(run_muninn, cfg)
    jobs = _jobs(report)
    for job in ("refresh", "snapshot"):
        data = jobs[job]
        for name, exported in data["exported"].items():
            listed = full[name]
            counted = exported["redactions"]
            assert counted["count"] == len(listed) > 0, name
            assert counted["by_rule"] == dict(Counter(e["rule"] for e in listed if e["kind"] == "pattern"))
            assert counted["by_secret"] == dict(Counter(e["secret_id"] for e in listed if e["kind"] == "value"))
        rolled = data["redactions"]
        assert rolled["full_list"] == FULL_LIST
        assert rolled["by_source"] == {n: len(full[n]) for n in data["exported"]}
        assert rolled["count"] == sum(rolled["by_source"].values())
    notes = jobs["refresh"]["redactions"]
    # Six notes, each with both known values: six of each, named by secret id.
    assert notes["by_secret"] == {"chat-bot-token": 6, "nas-admin": 6}
    assert sum(notes["by_rule"].values()) >= 6 * len(PATTERN_ONLY)
    assert FULL_LIST in next(j["detail"] for j in report["jobs"] if j["name"] == "refresh")


def test_the_report_holds_no_value_text_file_line_or_fingerprint(tmp_path: Path, night, run_muninn) -> None:
    cfg = _home(tmp_path, notes=4)
    path, report = night(cfg)
    said = path.read_text()
    for needle in [*KNOWN, *PATTERN_ONLY.values()]:
        assert needle not in said and needle[:8] not in said, needle
    full = _full_list(run_muninn, cfg)
    for entries in full.values():
        for e in entries:
            if e["fingerprint"]:
                assert e["fingerprint"].split(":")[-1] not in said
    assert "worker-000" not in said and '"line"' not in said and '"fingerprint"' not in said


def test_the_report_does_not_grow_with_the_number_of_redactions(tmp_path: Path, night) -> None:
    small_path, small = night(_home(tmp_path / "small", notes=3))
    big_path, big = night(_home(tmp_path / "big", notes=120))
    assert _jobs(big)["refresh"]["redactions"]["count"] >= 40 * _jobs(small)["refresh"]["redactions"]["count"]
    # The same rules and ids: only the numbers change (and the run's own paths and timings).
    assert len(big_path.read_text()) < len(small_path.read_text()) + 600


def test_nightly_last_reads_the_counted_report_as_table_and_json(tmp_path: Path, night, run_muninn) -> None:
    cfg = _home(tmp_path, notes=2)
    path, report = night(cfg)
    table = run_muninn(["--config", str(cfg), "nightly", "--last"])
    assert table.exit_code == 0, table.stderr
    assert "refresh" in table.stdout and "snapshot" in table.stdout
    assert "redaction(s)" in table.stdout and str(path) in table.stderr + table.stdout
    as_json = run_muninn(["--config", str(cfg), "nightly", "--last", "--json"])
    assert as_json.exit_code == 0
    data = json.loads(as_json.stdout)
    assert data["report"] == str(path) and data["jobs"] == report["jobs"]
    assert _jobs(data)["refresh"]["redactions"]["full_list"] == FULL_LIST
