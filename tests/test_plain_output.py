"""Output that survives a pipe: when stdout is not a terminal, no box drawing and no line wrapped at 80
columns; a table is tab-separated lines, header first; `secret show`'s `use:`/`run:` lines stay whole."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from rich.table import Table
from typer.testing import CliRunner

from muninn.cli import app
from muninn.core.cliutil import PlainWhenPiped, plain_table

BOX = set("╭╮╰╯│─┏┓┗┛┃━┌┐└┘┬┴├┤┼═║")
ROOT = Path(__file__).resolve().parents[1]

LONG_USE = ('curl -s -H "Authorization: Bearer $SVC_TOKEN" -H "Accept: application/json" '
            "https://" + "very-long-hostname." * 6 + "example.com/api/v2/" + "/".join(["segment"] * 15))


def _config(tmp_path: Path, entries: list[dict]) -> Path:
    secrets = tmp_path / "secrets.yaml"
    secrets.write_text(yaml.safe_dump(entries))
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"vault": {"files": [str(secrets)]}, "home": str(tmp_path / "home")}))
    return cfg


ENTRIES = [
    {"id": "svc-token", "service": "svc", "environment": "prod", "kind": "token", "use": LONG_USE,
     "notes": "A note long enough to be wrapped by a console that thinks it is 80 columns wide: " * 4,
     "value": "Zq7kP2xWm9Lr4Tn8Vb3Hd6"},
    {"id": "short", "service": "svc", "use": "svc login", "value": "Yh5Gt3Rf8Ed2Ws6Qa1"},
]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["id"])
def test_secret_show_lines_are_whole_in_a_pipe(tmp_path: Path, entry: dict) -> None:
    cfg = _config(tmp_path, ENTRIES)
    runner = CliRunner()
    assert runner.invoke(app, ["--config", str(cfg), "vault", "sync"]).exit_code == 0
    out = runner.invoke(app, ["--config", str(cfg), "secret", "show", entry["id"]])
    assert out.exit_code == 0, out.stderr
    lines = [line.strip() for line in out.stdout.splitlines()]
    assert f"use: {entry['use']}" in lines
    run = next(line for line in lines if line.startswith("run: "))
    assert run.startswith(f"run: muninn secret exec {entry['id']} -- ") and run.endswith("'")
    assert not BOX & set(out.stdout)
    if "notes" in entry:
        assert f"notes: {' '.join(entry['notes'].split())}" in lines


def test_export_summary_is_tab_separated_through_a_real_pipe(tmp_path: Path) -> None:
    env_home = tmp_path / "home"
    proc = subprocess.run([sys.executable, "-m", "muninn", "--config", str(ROOT / "examples/muninn.yaml"),
                           "export", "all"], capture_output=True, text=True,
                          env={**__import__("os").environ, "MUNINN_HOME": str(env_home)})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split("\t")[:3] == ["source", "facts", "written"]
    assert all(len(line.split("\t")) == 7 for line in lines)
    assert any(line.startswith("viking://resources/agents/raven/observations\t") for line in lines)
    assert not BOX & set(proc.stdout)
    # The summary line on stderr adds up the table.
    rows = [line.split("\t") for line in lines[1:]]
    facts, written = sum(int(r[1]) for r in rows), sum(int(r[2]) for r in rows)
    assert f"export: {len(rows)} source(s), {facts} facts: {written} written" in proc.stderr


CELLS = [["plain", "1"], ["[green]ok[/]", "2"], ["with\nnewline", "3"], ["x" * 500, "4"], ["", ""],
         ["[not markup", "5"]]


@pytest.mark.parametrize("row", CELLS, ids=range(len(CELLS)))
def test_a_table_in_a_pipe_is_one_line_a_row(row: list[str]) -> None:
    table = Table("name", "n", title="title [dim](how)[/]")
    table.add_row(*row)
    table.add_row("second", "6")
    lines = plain_table(table).splitlines()
    assert lines[0] == "title (how)" and lines[1] == "name\tn"
    assert len(lines) == 4 and lines[3] == "second\t6"
    assert len(lines[2].split("\t")) == 2


def test_a_piped_console_does_not_wrap(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    with path.open("w") as fh:
        PlainWhenPiped(file=fh).print("word " * 100 + LONG_USE, highlight=False, markup=False)
    assert path.read_text().count("\n") == 1
