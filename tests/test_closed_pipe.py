"""A reader that goes away (`muninn audit 2>&1 | head -1`, a pager quit early) ends muninn with exit 0 and
nothing printed, whichever stream it was reading: stdout, stderr, or both. The pipe is closed before
muninn writes anything, so every write it tries meets EPIPE."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

STREAMS = ["stdout", "stderr", "both"]


def _closed_pipe_run(argv: list[str], streams: str, env: dict[str, str]) -> int:
    read_end, write_end = os.pipe()
    os.close(read_end)   # the reader is already gone
    out = write_end if streams in ("stdout", "both") else subprocess.DEVNULL
    err = write_end if streams in ("stderr", "both") else subprocess.DEVNULL
    try:
        return subprocess.run([sys.executable, "-m", "muninn", *argv], stdout=out, stderr=err, env=env,
                              timeout=120).returncode
    finally:
        os.close(write_end)


@pytest.fixture
def workspace(tmp_path: Path) -> dict[str, str]:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Worker\n\nRestart it with systemctl; Authorization: Bearer docs-example-2024\n")
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "home"),
                                   "sources": [{"kind": "notes", "path": str(notes), "area": "viking://resources/n"}]}))
    audit = tmp_path / "home" / "audit"
    audit.mkdir(parents=True)
    (audit / "mcp.jsonl").write_text("".join(
        f'{{"time": "2026-11-30T10:00:0{i}+00:00", "profile": "raven", "tool": "recall_search", '
        f'"arguments": {{"query": "q{i}"}}, "decision": "allow", "reason": "ok", "duration_ms": 1.0}}\n'
        for i in range(5)))
    return {**os.environ, "MUNINN_CONFIG": str(cfg)}


# Commands that print a table (console), a summary line (stderr) or both, and exit 0 with a reader.
COMMANDS = [["audit"], ["audit", "--json"], ["export", "all"], ["redact", "list"], ["--version"], ["--help"]]


@pytest.mark.parametrize("streams", STREAMS)
@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_a_reader_that_went_away_is_exit_0(workspace: dict[str, str], argv: list[str], streams: str) -> None:
    control = subprocess.run([sys.executable, "-m", "muninn", *argv], capture_output=True, text=True,
                             env=workspace, timeout=120)
    assert control.returncode == 0, control.stderr   # with a reader, the command succeeds
    assert _closed_pipe_run(argv, streams, workspace) == 0
