"""The MCP Inspector's CLI (npm @modelcontextprotocol/inspector, pinned in tests/inspector/package-lock.json)
as an outside MCP client: it starts a server from a client config file and calls one method.

It runs under `env -i` with only PATH (for node), so the server sees nothing of the test's own
environment: whatever it needs must be in the config's `env` block, as for a real client.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent / "inspector"
BIN = HERE / "node_modules" / ".bin" / "mcp-inspector"


def ensure_installed() -> Path:
    """`npm ci` from the lockfile once (the Makefile's test target runs it too); the binary's path."""
    if not BIN.exists():
        npm = shutil.which("npm")
        assert npm, "the MCP Inspector tests need node and npm on PATH (https://nodejs.org)"
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=HERE,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
    return BIN


def call(config: Path, method: str, *extra: str, server: str = "muninn", timeout: float = 180) -> dict:
    """One method through the Inspector, the server started from `config`; the JSON it printed."""
    node = shutil.which("node")
    assert node, "node is not on PATH"
    cmd = ["env", "-i", f"PATH={Path(node).parent}:/usr/bin:/bin", str(ensure_installed()), "--cli",
           "--config", str(config), "--server", server, "--method", method, *extra]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"inspector exited {done.returncode}: {done.stderr[-3000:]}{done.stdout[-1000:]}"
    return json.loads(done.stdout)


def search(config: Path, query: str, server: str = "muninn") -> dict:
    return call(config, "tools/call", "--tool-name", "recall_search", "--tool-arg", f"query={query}", server=server)
