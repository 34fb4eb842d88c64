"""`muninn mcp install --client codex`, through the real CLI: muninn's server goes into Codex's own
config.toml as one marked block and comes out again, leaving the person's settings, comments and other
servers byte for byte; a file muninn must not change is named (exit 2) and left as it was. When a Codex
binary is at hand ($MUNINN_TEST_CODEX or `codex` on PATH), Codex itself reads the entry back."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

EXISTING = [
    None,                                                                       # no file yet
    "",
    '# my settings\nmodel = "gpt-5"\napproval_policy = "on-request"\n',
    '[mcp_servers.github]\ncommand = "npx"\nargs = ["-y", "gh"]\n\n[mcp_servers.github.env]\nT = "x"\n',
    '[profiles.fast]\nmodel = "o4-mini"   # trailing comment\n\n[tui]\nnotifications = true\n',
]
REFUSED = {
    "not TOML": "model = \n",
    "someone's muninn": '[mcp_servers.muninn]\ncommand = "/opt/other/muninn"\n',
    "inline servers": 'mcp_servers = { github = { command = "npx" } }\n',
}


def _muninn(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(home)}
    env.pop("CODEX_HOME", None)
    return subprocess.run([sys.executable, "-m", "muninn", *args], capture_output=True, text=True, env=env,
                          cwd=home, timeout=120)


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "h"
    (home / "notes").mkdir(parents=True)
    done = _muninn(home, "init", "--notes", str(home / "notes"), "--yes")
    assert done.returncode == 0, done.stderr
    return home


@pytest.mark.parametrize("existing", EXISTING)
def test_install_adds_one_block_and_uninstall_gives_the_file_back(tmp_path: Path, existing: str | None) -> None:
    home = _home(tmp_path)
    target = home / ".codex" / "config.toml"
    if existing is not None:
        target.parent.mkdir()
        target.write_text(existing)
    done = _muninn(home, "mcp", "install", "--client", "codex")
    assert done.returncode == 0 and "added the 'muninn' server" in done.stdout, done.stderr
    data = tomllib.loads(target.read_text())
    server = data["mcp_servers"]["muninn"]
    assert server["args"][-3:] == ["mcp", "--profile", "assistant"] and Path(server["command"]).is_absolute()
    assert server["env"]["MUNINN_CONFIG"].endswith("muninn.yaml")
    before = tomllib.loads(existing or "")
    assert {k: v for k, v in data.items() if k != "mcp_servers"} == {k: v for k, v in before.items()
                                                                     if k != "mcp_servers"}
    assert {k: v for k, v in data["mcp_servers"].items() if k != "muninn"} == before.get("mcp_servers", {})
    again = _muninn(home, "mcp", "install", "--client", "codex")
    assert again.returncode == 0 and "unchanged" in again.stdout
    assert target.read_text().count("[mcp_servers.muninn]") == 1
    gone = _muninn(home, "mcp", "install", "--client", "codex", "--uninstall")
    assert gone.returncode == 0 and "removed" in gone.stdout, gone.stderr
    assert target.read_text() == (existing or "")
    assert not (home / ".claude.json").exists() and not (home / ".claude").exists()   # Codex's file only


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_file_muninn_must_not_change_is_named_and_untouched(tmp_path: Path, case: str) -> None:
    home = _home(tmp_path)
    target = home / ".codex" / "config.toml"
    target.parent.mkdir()
    target.write_text(REFUSED[case])
    done = _muninn(home, "mcp", "install", "--client", "codex")
    assert done.returncode == 2 and str(target) in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert target.read_text() == REFUSED[case]


def test_the_owner_is_refused_for_codex_too(tmp_path: Path) -> None:
    home = _home(tmp_path)
    done = _muninn(home, "mcp", "install", "--client", "codex", "--profile", "owner")
    assert done.returncode == 2 and "owner" in done.stderr
    assert not (home / ".codex").exists()


def _codex() -> str | None:
    # `make test` installs the pinned Codex beside the Inspector (tests/inspector/package-lock.json).
    pinned = Path(__file__).parent / "inspector" / "node_modules" / ".bin" / "codex"
    return os.environ.get("MUNINN_TEST_CODEX") or (str(pinned) if pinned.exists() else shutil.which("codex"))


@pytest.mark.skipif(_codex() is None, reason="no Codex binary: run `make test` (npm ci in tests/inspector), "
                                             "set MUNINN_TEST_CODEX, or put `codex` on PATH")
def test_codex_itself_reads_the_entry(tmp_path: Path) -> None:
    home = _home(tmp_path)
    assert _muninn(home, "mcp", "install", "--client", "codex").returncode == 0
    got = subprocess.run([_codex(), "mcp", "get", "muninn", "--json"], capture_output=True, text=True, timeout=60,
                         env={"HOME": str(home), "PATH": "/usr/bin:/bin"})
    assert got.returncode == 0, got.stderr
    transport = json.loads(got.stdout)["transport"]
    assert transport["type"] == "stdio" and transport["args"][-2:] == ["--profile", "assistant"]
    assert transport["env"]["HOME"] == str(home) or "MUNINN_CONFIG" in transport["env"]
