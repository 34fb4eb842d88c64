"""`export all` says which source it is on while it runs (on a terminal only: a pipe, a file or cron gets
no redrawn line) and ends with one summary line either way."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import drain_pty

AREAS = ["viking://resources/a", "viking://resources/b", "viking://resources/c"]


def _config(tmp_path: Path) -> Path:
    sources = []
    for i, area in enumerate(AREAS):
        notes = tmp_path / f"notes{i}"
        notes.mkdir()
        (notes / "n.md").write_text(f"# Note {i}\n\nRestart worker {i} with systemctl.\n")
        sources.append({"kind": "notes", "path": str(notes), "area": area})
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "home"), "sources": sources}))
    return cfg


def _run(cfg: Path, terminal: bool) -> str:
    """`muninn export all`'s stderr, from a terminal (a pty) or a pipe."""
    argv = [sys.executable, "-m", "muninn", "--config", str(cfg), "export", "all"]
    if not terminal:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stderr
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=secondary)
    os.close(secondary)
    data = drain_pty(primary)
    assert proc.wait(timeout=120) == 0, data
    return data.decode()


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "pipe"])
def test_export_all_shows_each_source_then_a_summary(tmp_path: Path, terminal: bool) -> None:
    said = _run(_config(tmp_path), terminal)
    steps = [f"export {i}/{len(AREAS)} {area}/notes" for i, area in enumerate(AREAS, 1)]
    if terminal:
        assert all(step in said for step in steps), said
    else:
        assert "\r" not in said and not any(step in said for step in steps), said
    assert f"export: {len(AREAS)} source(s), {len(AREAS)} facts" in said, said
