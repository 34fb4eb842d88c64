"""What a person meets first at the prompt: a mistyped command says what it was close to, every listed
summary is a whole sentence, and help names a value's type without click's `<float range>`."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from muninn.cli import all_commands, app
from muninn.cli_index import COMMANDS


def _muninn(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "muninn", *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("typed, meant", [
    (["serch", "vpn"], "search"), (["statsu"], "status"), (["exprot", "all"], "export"), (["doctr"], "doctor"),
    (["mcp", "confg"], "config"), (["mcp", "instal"], "install"), (["policy", "aply"], "apply"),
    (["obsreve"], "observe"),
])
def test_a_mistyped_command_says_what_it_was_close_to(typed: list[str], meant: str) -> None:
    done = _muninn(*typed)
    assert done.returncode == 2 and not done.stdout
    assert "Did you mean" in done.stderr and repr(meant) in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


@pytest.mark.parametrize("typed", [["xyzzy"], ["qqqqqq", "x"], ["mcp", "zzz"]])
def test_nothing_close_gets_no_guess(typed: list[str]) -> None:
    done = _muninn(*typed)
    assert done.returncode == 2 and "No such command" in done.stderr and "Did you mean" not in done.stderr


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_listed_summary_is_a_whole_sentence(name: str) -> None:
    summary = " ".join(COMMANDS[name][1].split())
    assert summary and summary[-1] in ".)?`", f"`muninn --help` cuts {name}'s summary: {summary[-60:]!r}"


def _helps() -> list[tuple[str, list[str]]]:
    out = []
    for name, cmd in sorted(all_commands().items()):
        out.append((name, [name]))
        for sub in sorted(getattr(cmd, "commands", {})):
            out.append((f"{name} {sub}", [name, sub]))
    return out


@pytest.mark.parametrize("name, argv", _helps(), ids=[n for n, _ in _helps()])
def test_help_names_types_without_range(name: str, argv: list[str]) -> None:
    done = CliRunner().invoke(app, [*argv, "--help"])
    assert done.exit_code == 0, done.output
    assert " range>" not in done.output, f"muninn {name} --help: {done.output}"


def test_the_real_cli_prints_plain_types_and_the_bounds() -> None:
    done = _muninn("search", "--help")
    assert "-k <int>" in done.stdout and "--min-score <float>" in done.stdout and "[x>=1]" in done.stdout
