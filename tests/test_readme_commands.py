"""README.md's commands, run in the order the README gives them, in a temporary workspace against a real stack.

The convention: the line just above every ```bash block in README.md is one HTML comment,

    <!-- readme-test: run -->             the block runs here, as one `bash -euo pipefail` script
    <!-- readme-test: skip: REASON -->    the block cannot run here; REASON says why (reported as a skip)

A bash block without one fails `test_every_bash_block_is_marked`, so a new command is either run or
excused with its reason. The runnable blocks run top to bottom in one temporary $HOME (so `~/notes` and
`~/.config/muninn` are the test's own), with the muninn of this venv on PATH. Two things differ from a
user's machine, both because this machine runs other stacks at once: the server and sidecar ports come
from `MUNINN_SERVER__PORT` / `MUNINN_EMBED__PORT` (free ports), and the server venv is the shared one
(`MUNINN_SERVER_VENV`; building it takes minutes). After the block that writes `.mcp.json`, a real MCP
client starts the server from that file, as a client launched from this shell would, and searches as
the agent: the first hour ends with a connected agent.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import FILE_KEYRING, REAL_SERVER_VENV, free_port

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
_FENCE = re.compile(r"^```bash\n(.*?)^```", re.M | re.S)
_MARK = re.compile(r"^<!-- readme-test: (run|skip: (?P<reason>\S.*?)) -->$")


@dataclass(frozen=True)
class Block:
    line: int          # 1-based line of the opening fence
    script: str
    skip: str | None   # the reason it does not run here, or None when it runs

    @property
    def label(self) -> str:
        first = next((ln for ln in self.script.splitlines() if ln.strip()), "")
        return f"README.md:{self.line} {first.split('#')[0].strip()}"


def blocks(text: str) -> list[Block]:
    """Every bash block, in order, with its marker. An unmarked block raises ValueError naming its line."""
    out = []
    lines = text.splitlines()
    for m in _FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        above = lines[line - 2].strip() if line >= 2 else ""
        mark = _MARK.match(above)
        if mark is None:
            raise ValueError(f"README.md:{line}: a bash block without a `<!-- readme-test: run -->` or "
                             "`<!-- readme-test: skip: REASON -->` line above it")
        out.append(Block(line, m[1], mark["reason"]))
    return out


def test_every_bash_block_is_marked() -> None:
    found = blocks(README.read_text())
    assert len([b for b in found if b.skip is None]) >= 3
    assert all(b.skip is None or len(b.skip) > 20 for b in found)   # a reason, not a placeholder


@pytest.mark.parametrize("text, problem", [
    ("# x\n\n```bash\nmuninn up\n```\n", "without"),
    ("<!-- readme-test: run -->\n\n```bash\nmuninn up\n```\n", "without"),      # not on the line above
    ("<!-- readme-test: skip: -->\n```bash\nmuninn up\n```\n", "without"),      # a skip with no reason
    ("<!-- readme-test: maybe -->\n```bash\nmuninn up\n```\n", "without"),
])
def test_an_unmarked_block_is_refused(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        blocks(text)


def test_the_first_hour_goes_from_init_to_a_connected_agent_in_order() -> None:
    # The first hour (issue 35): `up` makes every reader's key and ACL before a client is configured.
    text = README.read_text()
    section = text.split("<!-- first-hour:begin", 1)[1].split("<!-- first-hour:end -->", 1)[0]
    steps = ["muninn init", "muninn secret add", "muninn up", "muninn doctor",
             "muninn export all", "muninn search", "muninn mcp install", "muninn mcp config"]
    at = [section.find(f"\n{step}") for step in steps]
    assert -1 not in at, dict(zip(steps, at, strict=True))
    assert at == sorted(at)


_SKIPPED = [b for b in blocks(README.read_text()) if b.skip]


@pytest.mark.parametrize("block", _SKIPPED, ids=[b.label for b in _SKIPPED])
def test_a_block_not_run_here_names_what_runs_it_instead(block: Block) -> None:
    """Not run here means run elsewhere: the reason names a test file that exists, or the suite itself."""
    named = re.findall(r"tests/test_\w+\.py", block.skip)
    assert named or "suite" in block.skip, block.skip
    assert all((ROOT / path).is_file() for path in named), named


def _workspace_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MUNINN_") and k not in ("XDG_DATA_HOME", "XDG_CONFIG_HOME")}
    env.update({
        "HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "PYTHON_KEYRING_BACKEND": FILE_KEYRING,
        "MUNINN_SERVER_VENV": REAL_SERVER_VENV,
        "MUNINN_SERVER__PORT": str(free_port()),
        "MUNINN_EMBED__PORT": str(free_port()),
    })
    return env


def _connect_agent(home: Path, env: dict[str, str]) -> None:
    """Start the server the way `.mcp.json` says, from this shell's environment, and search as the agent."""
    import anyio
    from mcp import Client, StdioServerParameters

    server = json.loads((home / ".mcp.json").read_text())["mcpServers"]["muninn"]
    assert Path(server["command"]).is_absolute() and server["args"][:2] == ["mcp", "--profile"]
    params = StdioServerParameters(command=server["command"], args=server["args"],
                                   env={**env, **server.get("env", {})}, cwd=str(home))

    async def main() -> tuple[set[str], str, bool]:
        async with Client(params, read_timeout_seconds=300) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            result = await client.call_tool("recall_search", {"query": "restart traefik"})
            text = "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
            return tools, text, bool(result.is_error)

    tools, text, failed = anyio.run(main)
    # init's policy names the agent's tools; the agent sees exactly those, and finds the notes.
    assert tools == {"recall_search", "recall_read", "recall_list", "recall_remember", "recall_status"}
    assert not failed, text
    assert "viking://resources/notes/" in text, text


@pytest.mark.integration
def test_the_readme_runs_in_order(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    shutil.copytree(ROOT / "examples" / "notes", home / "notes")
    env = _workspace_env(home)
    ran: list[str] = []
    try:
        for block in blocks(README.read_text()):
            if block.skip:
                continue
            done = subprocess.run(["bash", "-euo", "pipefail", "-c", block.script], cwd=home, env=env,
                                  capture_output=True, text=True, timeout=900)
            assert done.returncode == 0, f"{block.label}: exit {done.returncode}\n{done.stdout[-2000:]}\n" \
                                         f"{done.stderr[-3000:]}"
            ran.append(block.label)
            if "muninn init" in block.script:
                written = home / ".config" / "muninn"
                for name in ("muninn.yaml", "policy.yaml", "secrets.yaml"):
                    assert (written / name).stat().st_mode & 0o077 == 0, name
                assert "docs/configuration.md" in (written / "muninn.yaml").read_text()
            if 'muninn search "how do I restart the broker"' in block.script:
                assert "viking://resources/notes/" in done.stdout, done.stdout
            if "muninn mcp config" in block.script:
                _connect_agent(home, env)
                ran.append("an MCP client connected from .mcp.json")
    finally:
        subprocess.run(["muninn", "serve", "--stop"], cwd=home, env=env, capture_output=True, timeout=60)
        subprocess.run(["muninn", "down"], cwd=home, env=env, capture_output=True, timeout=120)
    assert any("mcp" in r for r in ran) and len(ran) >= 4, ran


def test_the_readme_stays_a_front_door() -> None:
    """≤ 300 lines (issue 51); the install says what it costs before its lines, and what is not protected."""
    text = README.read_text()
    assert len(text.splitlines()) <= 300
    install = text.split("## Install\n", 1)[1].split("```bash", 1)[0]
    assert "**Budget:**" in install and "GB of disk" in install and "RAM" in install and "minutes" in install
    assert "**What is not protected.**" in text.split("## Install\n", 1)[0]
