"""`muninn bench --smoke` as CI runs it: every section measured once at the smallest sizes and written.
No time is asserted (issue 19); the figures live in evals/results/benchmarks.md (`--quick` or the full run)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from muninn.evals.bench import SECTIONS

pytestmark = pytest.mark.integration


def test_smoke_bench_writes_every_section(tmp_path) -> None:
    out = tmp_path / "benchmarks.md"
    run = subprocess.run([sys.executable, "-m", "muninn", "bench", "--smoke", "--out", str(out)],
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-2000:]
    text = out.read_text()
    assert text.startswith("# Benchmarks (`muninn bench --smoke`)")
    assert re.search(r"Machine: .+ cores.+load average", text)
    for title in SECTIONS:
        body = text.split(f"## {title}\n", 1)
        assert len(body) == 2, f"section {title!r} missing"
        section = body[1].split("\n## ", 1)[0]
        assert "Load average at the start: " in section
        rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line]
        assert len(rows) >= 2, f"section {title!r} has no measurement"   # the header and one row at least
    for peer in ("OpenViking find alone", "BM25 alone", "plain regex"):
        assert peer in text


@pytest.mark.parametrize("title", ["Batch", "batch vs serial", "Search by stage "])
def test_an_unknown_section_is_named_and_nothing_runs(tmp_path, title: str) -> None:
    out = tmp_path / "benchmarks.md"
    run = subprocess.run([sys.executable, "-m", "muninn", "bench", "--section", title, "--out", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and f"no section {title!r}" in run.stderr and "Batch vs serial" in run.stderr
    assert "Traceback" not in run.stderr and not out.exists()


def test_quick_and_smoke_together_are_refused(tmp_path) -> None:
    run = subprocess.run([sys.executable, "-m", "muninn", "bench", "--quick", "--smoke", "--out",
                          str(tmp_path / "b.md")], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "choose one of --quick and --smoke" in run.stderr
    assert "Traceback" not in run.stderr and not (tmp_path / "b.md").exists()
