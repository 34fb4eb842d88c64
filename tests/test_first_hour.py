"""The first hour, as a person types it: `init` -> `up` -> `export all && sync all` -> `search` -> connect
an MCP client, in a fresh home, the keyring backend chosen by environment variable only. It ends with an
outside client (the MCP Inspector, under `env -i`) answering a search as the agent, from the snippet
`mcp config` printed, and as the assistant, from the entry `mcp install --client claude` wrote."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import inspector_cli
import pytest
from conftest import FILE_KEYRING, REAL_SERVER_VENV, free_port

NOTE = ("# Bastion\n\nThe bastion host for the platform cluster is jump01.example.com; bring the office "
        "WireGuard tunnel up with `wg-quick up office` before ssh.\n")


class Person:
    """One person's shell: their own HOME, nothing from the test session's environment."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.env = {
            "HOME": str(home), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
            "PYTHON_KEYRING_BACKEND": FILE_KEYRING,          # chosen by environment variable only
            "MUNINN_SERVER_VENV": REAL_SERVER_VENV,          # the shared server venv (minutes to build)
            "MUNINN_SERVER__PORT": str(free_port()), "MUNINN_EMBED__PORT": str(free_port()),
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "LANG": "C.UTF-8",
        }

    def muninn(self, *args: str, timeout: float = 600, ok: bool = True,
               input: str | None = None) -> subprocess.CompletedProcess:
        done = subprocess.run([sys.executable, "-m", "muninn", *args], capture_output=True, text=True,
                              env=self.env, cwd=self.home, timeout=timeout, input=input)
        if ok:
            assert done.returncode == 0, f"muninn {' '.join(args)} exited {done.returncode}: {done.stderr}"
        return done


@contextlib.contextmanager
def person_in(folder: Path) -> Iterator[Person]:
    """A person with a notes folder holding NOTE; whatever they started is stopped afterwards."""
    me = Person(folder / "me")
    (me.home / "notes").mkdir(parents=True)
    (me.home / "notes" / "bastion.md").write_text(NOTE)
    try:
        yield me
    finally:
        me.muninn("down", ok=False, timeout=120)


@pytest.fixture
def person(tmp_path: Path) -> Iterator[Person]:
    with person_in(tmp_path) as me:
        yield me


def _hit_uris(answer: dict) -> list[str]:
    return [h["uri"] for h in answer["structuredContent"]["hits"]]


def test_init_up_sync_search_connect_ends_with_an_agent_answering(person: Person) -> None:
    inspector_cli.ensure_installed()
    init = person.muninn("init", "--notes", "~/notes", "--yes")
    assert "next: muninn doctor" in init.stdout
    config = person.home / ".config" / "muninn" / "muninn.yaml"
    assert f"backend: \"{FILE_KEYRING}\"" in config.read_text()

    up = person.muninn("up")
    assert "policy: 3 reader(s) with a key in the keyring, 3 of 3 area(s)" in up.stderr, up.stderr
    person.muninn("export", "all")
    person.muninn("sync", "all")
    found = person.muninn("search", "bastion host for the platform cluster", "--json")
    assert any(h["uri"].endswith("/bastion.md") for h in json.loads(found.stdout)["hits"]), found.stdout

    snippet = person.home / "mcp.json"
    snippet.write_text(person.muninn("mcp", "config").stdout)
    tools = [t["name"] for t in inspector_cli.call(snippet, "tools/list")["tools"]]
    assert {"recall_search", "recall_read", "recall_remember"} <= set(tools), tools
    assert not {"recall_secret_show", "recall_access_exec"} & set(tools), tools   # the agent's own list
    answer = inspector_cli.search(snippet, "bastion host for the platform cluster")
    assert not answer.get("isError"), answer
    assert any(u.endswith("/bastion.md") for u in _hit_uris(answer)), answer

    # The same through Claude Code's own file, as the assistant reader.
    person.muninn("mcp", "install", "--client", "claude")
    installed = person.home / ".claude.json"
    assert json.loads(installed.read_text())["mcpServers"]["muninn"]["args"][-1] == "assistant"
    answer = inspector_cli.search(installed, "wg-quick office tunnel")
    assert any(u.endswith("/bastion.md") for u in _hit_uris(answer)), answer

