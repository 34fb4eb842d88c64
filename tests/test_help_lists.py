"""Every group's help lists each subcommand's whole first paragraph, wrapped, never cut with `...`
(click cuts it at the width left beside the name: ~45 to 70 characters in a pipe)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from muninn.cli import all_commands, app

# Hidden groups and commands are old spellings (docs/cli.md, "Renamed"): not listed, on purpose.
GROUPS = {name: cmd for name, cmd in all_commands().items()
          if not cmd.hidden and any(not c.hidden for c in (getattr(cmd, "commands", None) or {}).values())}


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_a_group_lists_each_subcommand_whole(group: str) -> None:
    result = CliRunner().invoke(app, [group, "--help"])
    assert result.exit_code == 0, result.output
    listing = result.stdout.split("Commands:", 1)[1]
    for name, sub in GROUPS[group].commands.items():
        if sub.hidden:
            continue
        first = _flat((sub.help or "").strip().split("\n\n")[0])
        assert first and first in _flat(listing), (group, name)
    assert not [ln for ln in listing.splitlines() if ln.rstrip().endswith("...")]   # click's cut marker


@pytest.mark.parametrize("group", ["secret", "access", "redact"])
def test_in_a_pipe_too(group: str) -> None:
    out = subprocess.run([sys.executable, "-m", "muninn", group, "--help"], capture_output=True, text=True,
                         env=os.environ.copy(), timeout=60)
    assert out.returncode == 0, out.stderr
    listing = out.stdout.split("Commands:", 1)[1]
    assert not [ln for ln in listing.splitlines() if ln.rstrip().endswith("...")]   # click's cut marker
    for sub in (c for c in GROUPS[group].commands.values() if not c.hidden):
        assert _flat(sub.help.strip().split("\n\n")[0]) in _flat(listing)
