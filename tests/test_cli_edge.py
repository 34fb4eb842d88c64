"""The CLI's one edge (muninn/core/edge.py), through the real root command: every bad argument is exit 2
with one `error:` line naming the fix, a bug is exit 70 with one sentence, and neither a typer panel nor
a traceback ever reaches the user. No server: each case fails before one would be needed."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

import muninn
from muninn.cli import app
from muninn.core.errors import ConfigError, ExitCode

runner = CliRunner()

BOX = set("╭╮╰╯│─┏┓┗┛┃━┌┐└┘")

# (argv, a word the sentence must hold). Each is a bad flag, argument or value: exit 2, one line.
BAD_ARGUMENTS = [
    (["bogus"], "No such command"),
    (["search", "--bogus", "x"], "--bogus"),
    (["search", "-k", "0", "x"], "-k"),
    (["search", "-k", "-3", "x"], "-k"),
    (["search", "-k", "many", "x"], "-k"),
    (["search", "--min-score", "2", "x"], "--min-score"),
    (["search", "--min-score", "-0.1", "x"], "--min-score"),
    (["search", "--json", "--files", "x"], "--files"),
    (["search", "--md", "--briefing", "x"], "--md"),
    (["search"], "QUERY"),
    (["search", "   "], "QUERY"),
    (["read"], "uri"),
    (["read", "/etc/passwd"], "viking://"),
    (["read", "../../etc/passwd"], "viking://"),
    (["read", "http://example.com/a.md"], "viking://"),
    (["read", "file:///etc/passwd"], "viking://"),
    (["read", "viking://resources/../../etc/passwd"], "climbs"),
    (["read", "viking://resources/a\u200bb.md"], "invisible"),
    (["read", "viking://resources/a?x=1"], "reserved"),
    (["read", "viking://resources"], "folder"),
    (["read", "viking://resources/"], "folder"),
    (["read", "viking://resources/shared/"], "folder"),
    (["verify", "nope"], "nope"),
    (["verify", "nope", "--dry-run"], "nope"),
    (["nightly", "--only", "nope"], "nope"),
    (["nightly", "--only", "acl-drift", "--only", "nope"], "nope"),
    (["eval", "-k", "0"], "-k"),
    (["secret", "bogus"], "No such command"),
    (["policy", "apply", "--bogus"], "--bogus"),
    (["--config"], "--config"),
]


def _invoke(argv: list[str]):
    return runner.invoke(app, argv)


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: "), stderr
    assert not BOX & set(stderr), stderr
    assert "Traceback" not in stderr and "<config>" not in stderr, stderr
    return lines[0]


@pytest.mark.parametrize("argv, word", BAD_ARGUMENTS, ids=[" ".join(a) or "-" for a, _ in BAD_ARGUMENTS])
def test_a_bad_argument_is_exit_2_with_one_sentence(argv: list[str], word: str) -> None:
    result = _invoke(argv)
    assert result.exit_code == ExitCode.BAD_INPUT, (result.exit_code, result.stderr, result.stdout)
    line = _one_error_line(result.stderr)
    assert word in line, line
    assert "INVALID_URI" not in line
    assert "(" in line and line.rstrip().endswith(")"), f"no fix in: {line}"


def test_a_bad_argument_through_the_installed_entry_point() -> None:
    """The same through a real process: what a shell sees, with the program named `muninn`."""
    proc = subprocess.run([sys.executable, "-m", "muninn", "search", "-k", "0", "x"], capture_output=True, text=True)
    assert proc.returncode == 2
    line = _one_error_line(proc.stderr)
    assert "`muninn search --help`" in line and proc.stdout == ""


@pytest.mark.parametrize("exc", [RuntimeError("boom"), KeyError("x"), ZeroDivisionError(), AttributeError("a\nb")],
                         ids=lambda e: type(e).__name__)
def test_a_bug_is_one_sentence_and_exit_70(monkeypatch: pytest.MonkeyPatch, exc: Exception) -> None:
    """Anything unexpected escaping a command: one sentence naming it, never a traceback."""
    from muninn.plugins.search import cli as search_cli

    def broken(*_a, **_k):
        raise exc

    monkeypatch.setattr(search_cli, "settings", broken)
    result = _invoke(["search", "a question"])
    assert result.exit_code == ExitCode.INTERNAL == 70
    line = _one_error_line(result.stderr)
    assert type(exc).__name__ in line and "MUNINN_DEBUG=1" in line


def test_muninn_debug_shows_the_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    from muninn.plugins.search import cli as search_cli

    monkeypatch.setenv("MUNINN_DEBUG", "1")
    monkeypatch.setattr(search_cli, "settings", lambda *_: 1 / 0)
    result = _invoke(["search", "a question"])
    assert isinstance(result.exception, ZeroDivisionError)


@pytest.mark.parametrize("error, expected", [
    (ConfigError("sync target 'x' is not an area", key="--to"), "--to: sync target 'x' is not an area"),
    (ConfigError("no secrets files to sync", key="vault.files"), "vault.files: no secrets files to sync"),
    (ConfigError("bad", path="muninn.yaml", line=3, key="server.prot"), "muninn.yaml:3: server.prot: bad"),
    (ConfigError("bad", path="muninn.yaml"), "muninn.yaml: bad"),
    (ConfigError("unknown corpus 'x'"), "unknown corpus 'x'"),
])
def test_a_flag_error_carries_no_config_prefix(error: ConfigError, expected: str) -> None:
    assert str(error) == expected


@pytest.mark.parametrize("argv", [["--version"], ["-V"]])
def test_version(argv: list[str]) -> None:
    result = _invoke(argv)
    assert result.exit_code == 0 and result.stdout == f"muninn {muninn.__version__}\n"


HELPED = [[], ["search"], ["read"], ["verify"], ["vault"], ["vault", "sync"], ["policy"], ["access", "exec"],
          ["secret", "show"], ["nightly"], ["export"], ["sync"], ["up"], ["mcp", "config"]]


@pytest.mark.parametrize("argv", HELPED, ids=lambda a: " ".join(a) or "muninn")
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_h_is_help_everywhere(argv: list[str], flag: str) -> None:
    result = _invoke([*argv, flag])
    assert result.exit_code == 0, result.stderr
    assert "Usage:" in result.stdout and result.stderr == ""


def test_no_command_prints_the_help_and_succeeds() -> None:
    result = _invoke([])
    assert result.exit_code == 0 and "Usage:" in result.stdout
