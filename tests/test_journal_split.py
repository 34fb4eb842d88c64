"""A short note with dated headings (a month's journal, well under the 1,200 characters that would split
it) is split at them: each day is its own fact, dated by its heading, not the whole file by its mtime."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from muninn.core import factfile

DAYS = [("2026-11-03", "Rotated the grafana admin token after the audit."),
        ("2026-11-12", "The office VPN dropped at 14:00; restarting wg-quick fixed it."),
        ("2026-11-20", "Moved the nightly backups to the NAS in the rack.")]
# The same days, headed the ways people write a journal.
SPELLINGS = {
    "iso": lambda d: d,
    "weekday": lambda d: {"2026-11-03": "Tuesday 2026-11-03", "2026-11-12": "Thursday 2026-11-12",
                          "2026-11-20": "Friday 2026-11-20"}[d],
    "month name": lambda d: {"2026-11-03": "Nov 3, 2026", "2026-11-12": "Nov 12, 2026",
                             "2026-11-20": "Nov 20, 2026"}[d],
    "day first": lambda d: {"2026-11-03": "3 November 2026", "2026-11-12": "12 November 2026",
                            "2026-11-20": "20 November 2026"}[d],
}


def _export(notes: Path, out: Path) -> dict[str, dict]:
    done = subprocess.run([sys.executable, "-m", "muninn", "export", "notes", str(notes), "--out", str(out)],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    facts = {}
    for path in out.rglob("*.md"):
        ff = factfile.parse(path.read_text())
        facts[ff.title] = {"date": ff.date, "body": ff.body}
    return facts


@pytest.mark.parametrize("style", sorted(SPELLINGS))
@pytest.mark.parametrize("level", ["##", "###"])
def test_each_day_is_its_own_fact_dated_by_its_heading(tmp_path: Path, style: str, level: str) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    text = "# November\n\n" + "".join(f"{level} {SPELLINGS[style](d)}\n\n{line}\n\n" for d, line in DAYS)
    assert len(text) < 600
    journal = notes / "journal.md"
    journal.write_text(text)
    old = time.time() - 90 * 86400
    os.utime(journal, (old, old))        # an mtime months away from every day in it
    facts = _export(notes, tmp_path / "out")
    for day, line in DAYS:
        (fact,) = [f for f in facts.values() if line in f["body"]]
        assert str(fact["date"]).startswith(day), (style, day, fact)
        assert all(other not in fact["body"] for _, other in DAYS if other != line)


@pytest.mark.parametrize("text", [
    "# Setup\n\n## Install\n\npip install muninn.\n\n## Configure\n\nmuninn init.\n",    # no day in any heading
    "# Upgrade\n\n## 2026-11-03\n\nUpgraded postgres.\n\n## Rollback\n\npg_restore from the dump.\n",  # one day
])
def test_a_short_note_without_two_dated_headings_stays_one_fact(tmp_path: Path, text: str) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "n.md").write_text(text)
    assert len(_export(notes, tmp_path / "out")) == 1
