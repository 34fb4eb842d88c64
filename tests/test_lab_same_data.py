"""The same-data comparison (evals/lab/corpora/same_data.py): identical lists counted, a moved list named,
hits by kind from the first right URI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from muninn.evals.lab.corpora import same_data


def _run(uris: list[list[str]]) -> dict:
    rows = [{"id": f"q{i}", "kind": "identifier" if i else "buried", "gold": ["g"], "uris": u}
            for i, u in enumerate(uris)]
    return {"manual": {"defaults": rows}}


def test_compare_counts_identical_lists_and_names_the_one_that_moved(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _run([["g", "a"], ["a", "b", "c", "d", "g"], ["a", "g"]])
    after = _run([["g", "a"], ["a", "b", "c", "d", "g"], ["g", "a"]])
    (tmp_path / "a.json").write_text(json.dumps(before))
    (tmp_path / "b.json").write_text(json.dumps(after))
    same_data.compare(str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    out, err = capsys.readouterr()
    assert "| manual | defaults | 3 | 2 / 3 | 2 / 2 | 3 / 3 |" in out
    assert "differs: manual defaults q2" in err and "q1" not in err
    assert "| manual | defaults | identifier | 2 | 1 | 2 |" in out
