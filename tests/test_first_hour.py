"""The first hour, as a person types it: the README's one recommended install (a fresh venv, torch from the
CPU index, `'.[ml]'` from this repository, `muninn` linked onto PATH) -> `init` -> `up` -> `export all && sync
all` -> `search` -> connect an MCP client, in a fresh home, the keyring backend chosen by environment variable
only. It ends with an outside client (the MCP Inspector, under `env -i`) answering a search as the agent, from
the snippet `mcp config` printed, and as the assistant, from the entry `mcp install --client claude` wrote.

The install runs the README's lines as written, with two differences: the fresh venv sees this session's
installed dependencies (a .pth file), so pip finds torch and the rest already satisfied and downloads
nothing big, and it gets a setuptools new enough for torch's metadata first; muninn itself is built from
the repository's files and installed into the fresh venv (about a minute and a half here)."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import inspector_cli
import pytest
from conftest import FILE_KEYRING, REAL_SERVER_VENV, free_port

ROOT = Path(__file__).resolve().parents[1]
NOTE = ("# Bastion\n\nThe bastion host for the platform cluster is jump01.example.com; bring the office "
        "WireGuard tunnel up with `wg-quick up office` before ssh.\n")


class Person:
    """One person's shell: their own HOME, nothing from the test session's environment."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.command = [sys.executable, "-m", "muninn"]
        self.env = {
            "HOME": str(home), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
            "PYTHON_KEYRING_BACKEND": FILE_KEYRING,          # chosen by environment variable only
            "MUNINN_SERVER_VENV": REAL_SERVER_VENV,          # the shared server venv (minutes to build)
            "MUNINN_SERVER__PORT": str(free_port()), "MUNINN_EMBED__PORT": str(free_port()),
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "LANG": "C.UTF-8",
        }

    def muninn(self, *args: str, timeout: float = 600, ok: bool = True,
               input: str | None = None) -> subprocess.CompletedProcess:
        done = subprocess.run([*self.command, *args], capture_output=True, text=True,
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


def readme_install() -> list[str]:
    """The README's recommended install, line by line (comments dropped)."""
    section = (ROOT / "README.md").read_text().split("## Install\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]


def install_as_the_readme_says(me: Person) -> None:
    """Run the README's install in `me`'s home from the repository, then use the `muninn` it put on PATH."""
    lines = readme_install()
    assert lines[0] == "python3.11 -m venv ~/.venvs/muninn", lines
    assert "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in lines[1], lines
    assert lines[2].endswith("pip install '.[ml]'") and "~/.local/bin/muninn" in lines[3], lines
    # PIP_RETRIES=0: an index this box cannot reach (PyPI, offline here) is given up at once, not after backoff.
    env = {**me.env, "PATH": f"{me.home}/.local/bin:{Path(sys.executable).parent}:/usr/bin:/bin", "PIP_RETRIES": "0"}

    def run(line: str) -> None:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", line], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, f"{line}: {done.stdout[-2000:]}{done.stderr[-2000:]}"

    run(lines[0])
    venv = me.home / ".venvs" / "muninn"
    # This session's dependencies, seen by the fresh venv: nothing big to download (torch is there, CPU build).
    deps = {str(Path(importlib.util.find_spec(m).origin).parents[1]) for m in ("torch", "typer", "pydantic")}
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "muninn-test-deps.pth").write_text("\n".join(sorted(deps - {str(site)})) + "\n")
    # torch's metadata asks for setuptools>=77.0.3, newer than the venv's own and this session's: from the
    # package index pip is configured with (a user's torch line gets it from the CPU index).
    run("~/.venvs/muninn/bin/pip install 'setuptools>=77.0.3'")
    for line in lines[1:]:
        run(line)
    me.env["PATH"] = env["PATH"].replace(f"{Path(sys.executable).parent}:", "")
    me.command = ["muninn"]
    where = subprocess.run(["bash", "-c", "command -v muninn && muninn --version"], env=me.env,
                           capture_output=True, text=True, timeout=60)
    assert where.stdout.startswith(f"{me.home}/.local/bin/muninn\nmuninn "), where
    found = subprocess.run([str(venv / "bin" / "python"), "-c", "import muninn.export; print(muninn.export.__file__)"],
                           capture_output=True, text=True, timeout=60, env=me.env, cwd=me.home)
    assert found.stdout.startswith(str(venv)), found      # built from the repo's files, not this checkout's editable


def _hit_uris(answer: dict) -> list[str]:
    return [h["uri"] for h in answer["structuredContent"]["hits"]]


def test_init_up_sync_search_connect_ends_with_an_agent_answering(person: Person) -> None:
    inspector_cli.ensure_installed()
    install_as_the_readme_says(person)
    init = person.muninn("init", "--notes", "~/notes", "--yes")
    assert "next: muninn doctor" in init.stdout
    config = person.home / ".config" / "muninn" / "muninn.yaml"
    assert f"backend: \"{FILE_KEYRING}\"" in config.read_text()

    up = person.muninn("up")
    assert "policy: 3 reader(s) with a key in the keyring, 3 of 3 area(s)" in up.stderr, up.stderr
    person.muninn("export", "all")
    person.muninn("sync", "all")
    found = person.muninn("search", "bastion host for the platform cluster", "--json")
    # At the area's root (`name: .`), not viking://resources/notes/notes/ (rough edge 7).
    assert "viking://resources/notes/bastion.md" in [h["uri"] for h in json.loads(found.stdout)["hits"]], found.stdout

    stores = json.loads(person.muninn("status", "--stores", "--json", "--profile", "owner").stdout)
    notes = next(r for r in stores if r["area"] == "notes")
    assert notes["files"] == 1 and notes["index"].startswith("kept current by sync"), stores

    snippet = person.home / "mcp.json"
    snippet.write_text(person.muninn("mcp", "config").stdout)
    tools = [t["name"] for t in inspector_cli.call(snippet, "tools/list")["tools"]]
    assert {"recall_search", "recall_read", "recall_remember"} <= set(tools), tools
    assert not {"recall_secret_show", "recall_access_exec"} & set(tools), tools   # the agent's own list
    answer = inspector_cli.search(snippet, "bastion host for the platform cluster")
    assert not answer.get("isError"), answer
    assert any(u.endswith("/bastion.md") for u in _hit_uris(answer)), answer

    # What the agent writes is in the audit by the URI it created, not an empty target.
    wrote = inspector_cli.call(snippet, "tools/call", "--tool-name", "recall_remember",
                               "--tool-arg", "text=jump01 answered ssh after the tunnel came up")
    uri = wrote["structuredContent"]["uri"]
    rows = json.loads(person.muninn("audit", "--json", "--tool", "recall_remember").stdout)["rows"]
    assert [r["target"] for r in rows] == [uri] and uri.startswith("viking://resources/agents/agent/"), rows

    # The same through Claude Code's own file, as the assistant reader.
    person.muninn("mcp", "install", "--client", "claude")
    installed = person.home / ".claude.json"
    assert json.loads(installed.read_text())["mcpServers"]["muninn"]["args"][-1] == "assistant"
    answer = inspector_cli.search(installed, "wg-quick office tunnel")
    assert any(u.endswith("/bastion.md") for u in _hit_uris(answer)), answer


def _warm(person: Person) -> dict[str, dict]:
    """The warm `muninn serve` processes this workspace's records name, by identity."""
    folder = person.home / ".local" / "share" / "muninn" / "serve"
    return {p.stem: json.loads(p.read_text()) for p in folder.glob("*.json")} if folder.is_dir() else {}


def _gone(pid: int, within: float = 30.0) -> bool:
    import psutil

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
            return True
        time.sleep(0.2)
    return False


def test_up_warms_search_an_edit_replaces_the_warm_process_and_down_stops_it(person: Person) -> None:
    import psutil

    person.muninn("init", "--notes", "~/notes", "--yes")
    up = person.muninn("up")
    assert "search: muninn serve warm in" in up.stderr, up.stderr
    (first,) = _warm(person).values()
    assert psutil.pid_exists(first["pid"])
    person.muninn("export", "all")
    person.muninn("sync", "all")
    person.muninn("search", "bastion host", "--json")
    assert [w["pid"] for w in _warm(person).values()] == [first["pid"]]   # the search used the warm one

    config = person.home / ".config" / "muninn" / "muninn.yaml"
    config.write_text(config.read_text() + "\nsearch:\n  timeout: 45\n")   # an edit: another identity
    person.muninn("search", "bastion host", "--json")
    warm = list(_warm(person).values())
    assert len(warm) == 1 and warm[0]["pid"] != first["pid"], warm
    assert _gone(first["pid"]), "the process for the old muninn.yaml still runs"

    down = person.muninn("down")
    assert "stopping muninn serve" in down.stderr, down.stderr
    assert _gone(warm[0]["pid"]) and _warm(person) == {}
