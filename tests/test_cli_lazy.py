"""The root CLI imports a part only when one of its commands runs (issue 19: `muninn --help` fast).

The listing comes from muninn/cli_index.py; these tests keep it true to the parts and check that a
fresh process, for help or for one command, loads none of the heavy libraries. No time is asserted.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

import muninn.cli
from muninn import cli_index

# Never loaded to list or describe commands; the root listing loads none of DEPENDENCIES either.
MODELS = ("torch", "onnxruntime", "transformers", "sentence_transformers", "FlagEmbedding", "tokenizers",
          "openviking", "detect_secrets")
DEPENDENCIES = ("numpy", "httpx", "keyring", "pydantic", "mcp", "rank_bm25", "cryptography", "dateparser",
                "ahocorasick_rs", "uvicorn", "fastapi", "yaml")

# Code run in a fresh interpreter, then the loaded modules among HEAVY and muninn's parts are printed.
PROBES = {
    "import": "import muninn.cli",
    "help": "import muninn.cli\ntry:\n    muninn.cli.app(['--help'])\nexcept SystemExit:\n    pass",
    "no-args": "import muninn.cli\ntry:\n    muninn.cli.app([])\nexcept SystemExit:\n    pass",
    "group-help": "import muninn.cli\ntry:\n    muninn.cli.app(['vault', '--help'])\nexcept SystemExit:\n    pass",
}


def _loaded(code: str) -> set[str]:
    # On stderr, after a marker: the help itself goes to stdout and names commands such as `mcp`.
    report = "\nimport sys\nprint('MODULES', ' '.join(sys.modules), file=sys.stderr)"
    out = subprocess.run([sys.executable, "-c", code + report], capture_output=True, text=True, check=True)
    return set(out.stderr.rsplit("MODULES", 1)[1].split())


@pytest.mark.parametrize("probe", sorted(PROBES))
def test_fresh_process_loads_nothing_heavy(probe: str) -> None:
    loaded = _loaded(PROBES[probe])
    heavy = sorted(m for m in (*MODELS, *(DEPENDENCIES if probe != "group-help" else ())) if m in loaded)
    assert heavy == [], f"{probe}: {heavy}"


@pytest.mark.parametrize("probe", ["import", "help", "no-args"])
def test_root_listing_imports_no_part(probe: str) -> None:
    loaded = _loaded(PROBES[probe])
    parts = sorted({module for module, _, _ in muninn.cli.PARTS} & loaded)
    assert parts == [], f"{probe}: {parts}"


def test_one_command_imports_only_its_part() -> None:
    loaded = _loaded(PROBES["group-help"])
    parts = {module for module, _, _ in muninn.cli.PARTS} & loaded
    assert parts == {"muninn.plugins.access.vault_cli"}


def test_index_matches_the_parts() -> None:
    """A stale index: regenerate it with `python -m muninn.cli --write-index`."""
    from pathlib import Path

    assert Path(cli_index.__file__).read_text() == muninn.cli._index_source()


def test_index_lists_every_command_of_every_part() -> None:
    assert list(cli_index.COMMANDS) == list(muninn.cli.all_commands())
    assert len(cli_index.COMMANDS) >= 20


@pytest.mark.parametrize("name", list(cli_index.COMMANDS))
def test_each_command_resolves_to_its_part(name: str) -> None:
    part, _ = cli_index.COMMANDS[name]
    resolved = muninn.cli.app_group().get_command(None, name)  # type: ignore[arg-type]
    assert resolved is not None and resolved.name == name
    assert resolved.help == muninn.cli.part_commands(*muninn.cli.PARTS[part])[name].help


@pytest.mark.parametrize("name", list(cli_index.COMMANDS))
def test_each_command_help_runs(name: str) -> None:
    result = CliRunner().invoke(muninn.cli.app, [name, "--help"])
    assert result.exit_code == 0, result.output
    first_words = " ".join(cli_index.COMMANDS[name][1].split()[:3])
    assert first_words in " ".join(result.output.split())


def test_root_help_lists_every_command() -> None:
    """Every command but a renamed one (`vault`: `secret load`); plumbing in the line under the panels."""
    result = CliRunner().invoke(muninn.cli.app, ["--help"])
    assert result.exit_code == 0
    words = " ".join(result.output.replace(",", " ").split()) + " "
    for name in cli_index.COMMANDS:
        if name in muninn.cli.RENAMED:
            assert f"\n  {name} " not in result.output
        else:
            assert f" {name} " in words, name


@pytest.mark.parametrize("args", [["no-such-command"], ["serch"], ["vault", "no-such-sub"]])
def test_unknown_command_is_a_usage_error(args: list[str]) -> None:
    result = CliRunner().invoke(muninn.cli.app, args)
    assert result.exit_code == 2


def test_command_missing_from_the_index_still_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command added to a part after the index was generated is found by importing every part."""
    monkeypatch.delitem(cli_index.COMMANDS, "read")
    result = CliRunner().invoke(muninn.cli.app, ["read", "--help"])
    assert result.exit_code == 0 and "fact file" in result.output
