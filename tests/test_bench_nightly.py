"""bench_nightly's at-size workspace and its report: no time is measured or asserted here (issue 19)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from muninn.evals.lab import bench_nightly

ROOT = Path(__file__).resolve().parents[1]
DEMO = yaml.safe_load((ROOT / "examples" / "muninn.yaml").read_text())


@pytest.mark.parametrize("export", [None, {}, {"secret_files": []}, {"secret_files": ["a.env", "b.yaml"]},
                                    {"secret_files": ["a.env"], "batch_size": 7}])
def test_with_record_reads_the_record_and_adds_its_values(export: dict | None) -> None:
    cfg = copy.deepcopy(DEMO)
    if export is not None:
        cfg["export"] = copy.deepcopy(export)
    before = (export or {}).get("secret_files", [])
    out = bench_nightly.with_record(cfg, Path("/r/record.db"), Path("/r/secrets.yaml"))
    tasks = [s for s in out["sources"] if s["kind"] == "tasks"]
    assert [t["path"] for t in tasks] == ["/r/record.db"]
    assert tasks[0]["area"] == "viking://resources/roadmap"
    assert out["export"]["secret_files"] == [*before, "/r/secrets.yaml"]
    # Every other source, and every other export setting, as the demo has it.
    assert [s for s in out["sources"] if s["kind"] != "tasks"] == [s for s in DEMO["sources"] if s["kind"] != "tasks"]
    assert {k: v for k, v in out["export"].items() if k != "secret_files"} == \
           {k: v for k, v in (export or {}).items() if k != "secret_files"}


@pytest.mark.parametrize("sources", [[], [{"kind": "notes", "path": "n", "area": "viking://resources/x"}],
                                     [{"kind": "tasks", "path": "a.db", "area": "viking://resources/a"},
                                      {"kind": "tasks", "path": "b.db", "area": "viking://resources/b"}]])
def test_with_record_needs_exactly_one_tasks_source(sources: list[dict]) -> None:
    with pytest.raises(ValueError, match="one tasks source"):
        bench_nightly.with_record({"sources": sources}, Path("r.db"), Path("s.yaml"))


def _night(seconds: float, detail: str, status: str = "ok") -> list[dict]:
    return [{"name": "refresh", "status": status, "seconds": seconds, "detail": detail},
            {"name": "(whole run)", "status": "exit 0", "seconds": seconds + 1, "detail": "load 1.00 at its start"}]


@pytest.mark.parametrize("detail", ["5 source(s) exported", "a | b | c", "x" * 400, ""])
def test_write_record_one_row_per_job_with_both_nights(detail: str) -> None:
    text = bench_nightly.write_record(5600, _night(12.345, detail), _night(1.5, "nothing changed", "warn"), (3.0, 4.0))
    assert "5,600 facts" in text and "load average 3.00 at the start, 4.00 at the end" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert [r.split(" | ")[0] for r in rows] == ["| refresh", "| (whole run)"]
    for row in rows:
        assert row.count(" | ") == 6   # seven cells: a '|' in what a job said is not a cell of its own
    assert rows[0].startswith("| refresh | 12.35 | ok | 1.50 | warn | ")
    assert rows[0].endswith(" | nothing changed |")


def test_write_record_a_job_missing_on_the_next_night_is_marked() -> None:
    text = bench_nightly.write_record(10, _night(2, "a"), _night(1, "b")[1:], (0.0, 0.0))
    assert "| refresh | 2.00 | ok | 0.00 | - |" in text


@pytest.mark.parametrize("before", [None, "", "# old\n\n## After\nx\n",
                                    "# old\n\n## At 5,600 facts\n| a |\n\n## At 50,000\nb\n"])
def test_a_demo_run_keeps_the_at_size_sections(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               before: str | None) -> None:
    out = tmp_path / "nightly.md"
    if before is not None:
        out.write_text(before)
    monkeypatch.setattr(bench_nightly, "OUT", out)
    night = _night(1.0, "ok")
    bench_nightly.write(night, night, [{"returned": 0.1, "keyword": 0.2, "vector": 0.3}], 1.0)
    text = out.read_text()
    assert text.startswith("# Nightly and the agent's day: measured") and "| refresh | 1.00 | ok |" in text
    kept = before[before.index("\n## At "):] if before and "\n## At " in before else ""
    assert text.endswith(kept) and text.count("## At ") == kept.count("## At ")
    assert "# old" not in text and "## After\nx" not in text


def _trial(create: float) -> dict:
    return {"create": create, "verify": 1.0, "restore": 3.0, "bytes": 2_000_000, "held": 5600, "members": 5605,
            "problems": 0, "written": 5600, "restore_exit": 0}


@pytest.mark.parametrize("before", ["", "# Nightly\n\nx\n",
                                    "# Nightly\n\n## At 5,600 facts: backup, restore, drill\nOLD-ROW\n",
                                    "# N\n\n## At 200 facts: backup, restore, drill\nsmall\n\n## At 5,600 facts: "
                                    "backup, restore, drill\nOLD-ROW\n\n## At 9 facts\nkept\n"])
def test_backup_times_replace_their_own_size_section_and_keep_the_others(before: str) -> None:
    section = bench_nightly.write_backup_times(5600, [_trial(4.0), _trial(2.0), _trial(9.0)], (1.0, 2.0), "up 1 min")
    assert section.startswith("## At 5,600 facts: backup, restore, drill")
    assert "| backup create | 4.00 | 4.00, 2.00, 9.00 |" in section and "`uptime` during the run: `up 1 min`" in section
    text = bench_nightly._put_section(before, section)
    assert text.count("## At 5,600 facts") == 1 and "OLD-ROW" not in text and section in text
    for kept in ("small", "kept", "\nx\n"):
        assert (kept in text) == (kept in before)
