"""Every table muninn prints names each of its columns: a blank header is a column a script reading the
tab-separated form (`check\\t\\tdetail`) cannot name, and a person cannot read."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PARTS = ["muninn", "plugins", "export", "guards", "nightly", "evals"]


def _tables() -> list[tuple[str, int, list[str]]]:
    """(file, line, headers) of every `Table(...)` call with literal headers in muninn's code."""
    out = []
    for part in PARTS:
        for path in sorted((ROOT / part).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Table":
                    heads = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                    out.append((str(path.relative_to(ROOT)), node.lineno, heads))
    return out


def test_the_walk_sees_the_tables() -> None:
    found = {f for f, _, heads in _tables() if heads}
    assert {"plugins/stack/doctor_cli.py", "nightly/cli.py", "plugins/stack/policy_cli.py",
            "plugins/stack/cli.py"} <= found


@pytest.mark.parametrize("where, line, heads", _tables(), ids=lambda v: str(v) if isinstance(v, str) else None)
def test_no_blank_header(where: str, line: int, heads: list[str]) -> None:
    assert all(h.strip() for h in heads), f"{where}:{line}: {heads}"


def test_doctor_in_a_pipe_names_every_column(tmp_path: Path) -> None:
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text("server: {port: 1}\n")
    done = subprocess.run([sys.executable, "-m", "muninn", "--config", str(cfg), "doctor"], capture_output=True,
                          text=True, env={**os.environ, "MUNINN_SEARCH__TIMEOUT": "2"}, timeout=120)
    header = done.stdout.splitlines()[0].split("\t")
    assert header == ["check", "status", "detail", "fix"], done.stdout[:300]
