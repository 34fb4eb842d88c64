"""The CLI's one edge (muninn/core/edge.py), through the real root command: every bad argument is exit 2
with one `error:` line naming the fix, a bug is exit 70 with one sentence, and neither a typer panel nor
a traceback ever reaches the user. No server: each case fails before one would be needed."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys

import pytest

import muninn
from muninn import cli
from muninn.core.errors import ConfigError, ExitCode

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



@pytest.fixture
def invoke(run_muninn):
    """The installed entry point (`muninn.cli.main`) in this process, as a shell would run it."""
    return run_muninn


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: "), stderr
    assert not BOX & set(stderr), stderr
    assert "Traceback" not in stderr and "<config>" not in stderr, stderr
    return lines[0]


@pytest.mark.parametrize("argv, word", BAD_ARGUMENTS, ids=[" ".join(a) or "-" for a, _ in BAD_ARGUMENTS])
def test_a_bad_argument_is_exit_2_with_one_sentence(invoke, argv: list[str], word: str) -> None:
    result = invoke(argv)
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
def test_a_bug_is_one_sentence_and_exit_70(invoke, monkeypatch: pytest.MonkeyPatch, exc: Exception) -> None:
    """Anything unexpected escaping a command: one sentence naming it, never a traceback."""
    from muninn.plugins.search import cli as search_cli

    def broken(*_a, **_k):
        raise exc

    monkeypatch.setattr(search_cli, "settings", broken)
    result = invoke(["search", "a question"])
    assert result.exit_code == ExitCode.INTERNAL == 70
    line = _one_error_line(result.stderr)
    assert type(exc).__name__ in line and "MUNINN_DEBUG=1" in line


def test_muninn_debug_shows_the_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    from muninn.plugins.search import cli as search_cli

    monkeypatch.setenv("MUNINN_DEBUG", "1")
    monkeypatch.setattr(search_cli, "settings", lambda *_: 1 / 0)
    monkeypatch.setattr(sys, "argv", ["muninn", "search", "a question"])
    with pytest.raises(ZeroDivisionError):
        cli.main()


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
def test_version(invoke, argv: list[str]) -> None:
    result = invoke(argv)
    assert result.exit_code == 0 and result.stdout == f"muninn {muninn.__version__}\n"


HELPED = [[], ["search"], ["read"], ["verify"], ["vault"], ["vault", "sync"], ["policy"], ["access", "exec"],
          ["secret", "show"], ["nightly"], ["export"], ["sync"], ["up"], ["mcp", "config"]]


@pytest.mark.parametrize("argv", HELPED, ids=lambda a: " ".join(a) or "muninn")
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_h_is_help_everywhere(invoke, argv: list[str], flag: str) -> None:
    result = invoke([*argv, flag])
    assert result.exit_code == 0, result.stderr
    assert "Usage:" in result.stdout and result.stderr == ""


def test_no_command_prints_the_help_and_succeeds(invoke) -> None:
    result = invoke([])
    assert result.exit_code == 0 and "Usage:" in result.stdout


def _every_command() -> list[tuple[str, ...]]:
    from typer.core import TyperGroup

    out: list[tuple[str, ...]] = [()]
    for name, cmd in sorted(cli.all_commands().items()):
        out.append((name,))
        if isinstance(cmd, TyperGroup):
            out += [(name, sub) for sub in sorted(cmd.commands)]
    return out


def _greedy(paragraph: list[str], width: int) -> bool:
    """Each line of a wrapped paragraph was broken only because the next word did not fit."""
    return all(len(line) + 1 + len(nxt.split()[0]) > width for line, nxt in itertools.pairwise(paragraph))


@pytest.mark.parametrize("argv", _every_command(), ids=lambda a: " ".join(a) or "muninn")
def test_help_is_plain_and_rewrapped(invoke, monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...]) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    result = invoke([*argv, "--help"])
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    assert "<bool>" not in text and not BOX & set(text)
    description = text.split("\n\n", 1)[1].split("\nOptions:")[0].split("\nArguments:")[0]
    for block in description.split("\n\n"):
        lines = block.splitlines()
        # Prose paragraphs sit at two spaces; examples (`\b` blocks) are indented further or headed.
        if lines and all(line.startswith("  ") and not line.startswith("   ") for line in lines) \
                and not lines[0].strip().endswith(":"):
            assert _greedy(lines, 78), block


PYTHON_TYPE = re.compile(r"<[^<>\s]*(?:\[|\bbool\b|NoneType|Optional|Union)[^<>\s]*>")


@pytest.mark.parametrize("argv", _every_command(), ids=lambda a: " ".join(a) or "muninn")
def test_help_names_no_python_type(invoke, monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...]) -> None:
    """A metavar says what to type, not how muninn holds it: no `<bool>`, `<list[str]>`, `<Optional[int]>`."""
    monkeypatch.setenv("COLUMNS", "80")
    text = invoke([*argv, "--help"]).stdout
    assert not PYTHON_TYPE.findall(text), PYTHON_TYPE.findall(text)


@pytest.mark.parametrize(("argv", "shown"), [
    (["nightly"], "--only <str>"), (["export"], "--secrets <path>"), (["vault", "sync"], "files... <path>"),
    (["redact", "allow"], "fingerprints... <str>"), (["verify"], "ids... <str>"),
])
def test_a_repeatable_value_shows_its_items_type(invoke, monkeypatch: pytest.MonkeyPatch, argv: list[str],
                                                 shown: str) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    assert shown in invoke([*argv, "--help"]).stdout


@pytest.mark.parametrize("argv", [["read"], ["verify"], ["access", "exec"], ["policy"], ["secret"], ["search"]])
def test_examples_in_help(invoke, argv: list[str]) -> None:
    text = invoke([*argv, "--help"]).stdout
    assert "Examples:" in text
    examples = text.split("Examples:", 1)[1].split("\n\n")[0].splitlines()[1:]
    assert examples and all(line.strip().startswith("muninn ") for line in examples)


@pytest.mark.parametrize("code", [0, 1, 3, ExitCode.CHECK_FAILED, ExitCode.LEAK_GATE_DROPPED, 127])
def test_a_command_exit_code_survives_the_edge(invoke, monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    """`raise typer.Exit(ExitCode.X)` from a command (status, doctor, verify do) is the process's code."""
    import typer

    from muninn.plugins.search import cli as search_cli

    def exits(*_a, **_k):
        raise typer.Exit(code)

    monkeypatch.setattr(search_cli, "settings", exits)
    assert invoke(["search", "a question"]).exit_code == int(code)
