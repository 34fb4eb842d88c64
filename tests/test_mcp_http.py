"""The optional streamable-HTTP transport, loopback only, through a real MCP client. Tool listing and
refusals need no OpenViking server, so this runs without the stack."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from conftest import free_port
from mcp import Client

from muninn.core import config, credentials
from muninn.plugins.mcp import audit

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "policy.yaml"


@pytest.fixture
def http_server(tmp_path: Path):
    port = free_port()
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(f"home: {tmp_path / 'home'}\nguard: {{policy: {EXAMPLE}, audit_log: {tmp_path / 'audit.jsonl'}}}\n")
    # The server starts with raven's key in its own keyring scope; listing and refusals never use it,
    # so a stand-in does (this test must not lean on keys other tests left behind).
    credentials.for_server(config.load(cfg)).set(credentials.user_key_name("home", "raven"), "stand-in-key")
    proc = subprocess.Popen([sys.executable, "-m", "muninn", "mcp", "--profile", "raven", "--http", str(port),
                             "--config", str(cfg)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60  # readiness, not a timing assertion
        while time.monotonic() < deadline and proc.poll() is None:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        yield f"http://127.0.0.1:{port}/mcp", tmp_path / "audit.jsonl"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_http_transport_lists_the_profile_and_refuses(http_server) -> None:
    url, audit_file = http_server

    async def main():
        async with Client(url, read_timeout_seconds=60) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            forbidden = await client.call_tool("privacy_resolve", {"uri": "viking://resources"})
            sneaky = await client.call_tool("recall_read", {"uri": "viking://resources/agents/raven/%2e%2e/bob"})
            return tools, forbidden, sneaky

    tools, forbidden, sneaky = anyio.run(main)
    assert tools == ["recall_search", "recall_read", "recall_list", "recall_remember", "recall_status"]
    assert forbidden.is_error and "never available to agent" in forbidden.content[0].text
    assert sneaky.is_error and "outside this profile's read areas" in sneaky.content[0].text
    assert [x["decision"] for x in audit.read(audit_file)] == ["deny", "deny"]
