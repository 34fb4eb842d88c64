"""Issue 51 §3, through the real CLI: one client gets one reader from `mcp config` and `mcp install`; the
recording hook goes in only when asked (`--record`), is kept on a re-install and taken out by
`--no-record`; and each command says which reader it wrote and whether its writes are trusted."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from muninn.core import policy
from muninn.plugins.mcp import client_install


@pytest.fixture
def home(cli_home) -> Path:
    home = cli_home.path
    return home


def _profile(args: list[str]) -> str:
    return args[args.index("--profile") + 1]


def test_claude_gets_the_same_reader_from_config_and_install(home: Path, cli_home) -> None:
    printed = cli_home.run("mcp", "config", "--client", "claude")
    assert printed.returncode == 0, printed.stderr
    installed = cli_home.run("mcp", "install", "--client", "claude")
    assert installed.returncode == 0, installed.stderr
    from_config = _profile(json.loads(printed.stdout)["mcpServers"]["muninn"]["args"])
    from_install = _profile(json.loads((home / ".claude.json").read_text())["mcpServers"]["muninn"]["args"])
    assert from_config == from_install == "assistant"
    assert "reader 'assistant' (assistant)" in printed.stderr and "reader 'assistant' (assistant)" in installed.stderr


def test_codex_gets_the_same_reader_from_config_and_install(home: Path, cli_home) -> None:
    printed = cli_home.run("mcp", "config", "--client", "codex")
    installed = cli_home.run("mcp", "install", "--client", "codex")
    assert printed.returncode == 0 and installed.returncode == 0, printed.stderr + installed.stderr
    written = tomllib.loads((home / ".codex" / "config.toml").read_text())
    assert _profile(tomllib.loads(printed.stdout)["mcp_servers"]["muninn"]["args"]) == "assistant"
    assert _profile(written["mcp_servers"]["muninn"]["args"]) == "assistant"


def test_any_other_client_is_the_local_agent_labelled_untrusted(home: Path, cli_home) -> None:
    printed = cli_home.run("mcp", "config")
    assert printed.returncode == 0, printed.stderr
    assert _profile(json.loads(printed.stdout)["mcpServers"]["muninn"]["args"]) == "agent"
    assert "reader 'agent' (agent): writes into agent (labelled untrusted" in printed.stderr


def _hooked(home: Path) -> bool:
    path = home / ".claude" / "settings.json"
    return path.exists() and client_install.has_hooks(json.loads(path.read_text()))


def test_recording_is_chosen_kept_and_taken_out(home: Path, cli_home) -> None:
    first = cli_home.run("mcp", "install", "--client", "claude")
    assert first.returncode == 0, first.stderr
    assert not _hooked(home) and "not recording tool calls" in first.stderr and "--record" in first.stderr
    assert (home / ".claude.json").exists() and (home / ".claude" / "commands" / "recall.md").exists()

    chosen = cli_home.run("mcp", "install", "--client", "claude", "--record")
    assert chosen.returncode == 0 and _hooked(home), chosen.stderr
    assert "every tool call's input and output" in chosen.stderr and "synced" in chosen.stderr

    again = cli_home.run("mcp", "install", "--client", "claude")        # the last choice is kept
    assert again.returncode == 0 and _hooked(home) and "recording:" in again.stderr

    off = cli_home.run("mcp", "install", "--client", "claude", "--no-record")
    assert off.returncode == 0 and not _hooked(home), off.stderr
    assert "removed the `muninn observe` hook" in off.stdout
    assert "muninn" in json.loads((home / ".claude.json").read_text())["mcpServers"]   # the server stays


def test_codex_cannot_record_and_nothing_is_written(home: Path, cli_home) -> None:
    done = cli_home.run("mcp", "install", "--client", "codex", "--record")
    assert done.returncode == 2 and "Codex has no hooks" in done.stderr
    assert not (home / ".codex" / "config.toml").exists()


def test_init_says_the_assistant_is_trusted_and_the_agent_is_not(home: Path) -> None:
    text = (home / ".config" / "muninn" / "policy.yaml")
    path = text if text.exists() else Path(os.environ["XDG_CONFIG_HOME"]) / "muninn" / "policy.yaml"
    pol = policy.load(path)
    assert pol.profile("assistant").trusted and not pol.profile("agent").trusted
    assert "trusted: true" in path.read_text()    # written down, so the owner sees the choice and can flip it
