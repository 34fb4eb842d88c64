"""After `muninn init`, what `muninn up` will do is pending, not failing: doctor exits 0 and ends with one line
that says what to run. Once the workspace has been up, the same rows are failures again. Real CLI, real checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import free_port

from muninn.core import embed_record

UP_DOES = ("openviking-server", "server at", "embed at", "embedding model")


@pytest.fixture
def fresh(run_muninn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config `muninn init` wrote, nothing brought up: no server venv, no model fetched, nothing listening."""
    monkeypatch.setenv("MUNINN_SERVER__VENV", str(tmp_path / "no-server-venv"))
    monkeypatch.setenv("MUNINN_MODELS", str(tmp_path / "no-models"))
    monkeypatch.setenv("MUNINN_SERVER__PORT", str(free_port()))
    monkeypatch.setenv("MUNINN_EMBED__PORT", str(free_port()))
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "dns.md").write_text("# DNS\n\nThe resolver is unbound on the router.\n")
    cfg = tmp_path / "muninn.yaml"
    assert run_muninn(["--config", str(cfg), "init", "--notes", str(notes), "--yes"]).exit_code == 0
    return cfg


def _rows(checks: list[dict]) -> dict[str, str]:
    return {c["name"]: c["level"] for c in checks if c["name"].startswith(UP_DOES)}


def test_what_up_will_do_is_pending_after_init(run_muninn, fresh: Path) -> None:
    ended = run_muninn(["--config", str(fresh), "doctor", "--json"])
    report = json.loads(ended.stdout)
    rows = _rows(report["checks"])
    assert len(rows) == 4 and set(rows.values()) == {"pending"}, rows
    assert ended.exit_code == 0 and report["ok"] is True and report["counts"]["fail"] == 0
    assert report["counts"]["pending"] == 4 and "run `muninn up`" in report["summary"]
    # Every pending row's fix is the one command, so the README's story and doctor's agree.
    assert all("muninn up" in c["fix"] for c in report["checks"] if c["level"] == "pending")


def test_the_table_ends_with_the_summary_line(run_muninn, fresh: Path) -> None:
    ended = run_muninn(["--config", str(fresh), "doctor"])
    last = ended.stdout.rstrip().splitlines()[-1]
    assert ended.exit_code == 0 and last.startswith("doctor: ") and "4 pending" in last and "muninn up" in last


def test_once_up_has_run_the_same_rows_fail(run_muninn, fresh: Path, tmp_path: Path) -> None:
    embed_record.record(tmp_path / "home", "intfloat/e5-small-v2", "e5-small-v2")    # what `up` records first
    ended = run_muninn(["--config", str(fresh), "doctor", "--json"])
    report = json.loads(ended.stdout)
    assert set(_rows(report["checks"]).values()) == {"fail"}
    assert ended.exit_code == 1 and report["ok"] is False and "fix the FAIL rows" in report["summary"]
