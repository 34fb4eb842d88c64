"""`muninn --help` groups its commands in panels by when a user reaches for them; plumbing is named in one
line under them, and a renamed group (`vault`) is not listed."""

from __future__ import annotations

import subprocess
import sys

from typer.testing import CliRunner

import muninn.cli
from muninn import cli_index
from muninn.cli import PANELS, PLUMBING, RENAMED, panels


def test_every_built_in_command_sits_in_exactly_one_named_panel() -> None:
    named = [n for _, names in PANELS for n in names]
    assert len(named) == len(set(named))
    assert sorted([*named, *PLUMBING, *RENAMED]) == sorted(cli_index.COMMANDS)
    assert panels(list(cli_index.COMMANDS))[-1][1] == []            # nothing falls to "Other commands"


def test_an_unknown_command_goes_to_the_last_panel() -> None:
    title, names = panels([*cli_index.COMMANDS, "wiki-sync"])[-1]
    assert names == ["wiki-sync"] and "plugins" in title


def test_the_root_help_shows_the_panels_in_order_with_the_first_hour_first() -> None:
    out = CliRunner().invoke(muninn.cli.app, ["--help"]).output
    at = [out.index(f"\n{title}:\n") for title, _ in PANELS]
    assert at == sorted(at)
    start = out[at[0]:at[1]]
    assert all(f"  {name} " in start for name in ("init", "up", "doctor"))
    assert "  observe " not in out and "  vault " not in out
    assert "Run for you by hooks, searches and migrations: observe, serve" in " ".join(out.split())


def test_the_installed_command_prints_them_in_a_pipe() -> None:
    out = subprocess.run([sys.executable, "-m", "muninn", "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "Start:" in out.stdout and "Run for you" in out.stdout
    listing = out.stdout.split("Start:", 1)[1]
    assert not [ln for ln in listing.splitlines() if ln.rstrip().endswith("...")]     # click's cut marker
