"""What the MCP tools start never reads the server's own stdin (under stdio, that is the MCP stream).

The guarded call path (`server.call`, the one both transports use) runs recall_access_exec and
recall_verify while this process's fd 0 is a pipe holding bytes that stand for the MCP stream; every
child that reads its stdin must read nothing of them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from muninn.core import config, policy
from muninn.plugins.mcp import server
from muninn.plugins.mcp.audit import AuditLog
from muninn.plugins.mcp.redaction import ValueRedactor
from muninn.plugins.mcp.session import GuardSession

FAKEBIN = Path(__file__).parent / "fakebin"
STREAM = b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call"}\n'
# Ways a child reads stdin: the shell's builtin, a program, a subshell, a here-string-free redirect.
READERS = ["read -r line; printf 'got:%s' \"$line\"", "cat", "head -c 64", "(cat)", "cat <&0",
           "dd bs=64 count=1 2>/dev/null"]



@pytest.fixture
def stream_on_stdin() -> Iterator[None]:
    """fd 0 becomes a pipe holding STREAM, as it would hold the client's next requests."""
    read_end, write_end = os.pipe()
    os.write(write_end, STREAM * 8)
    saved = os.dup(0)
    os.dup2(read_end, 0)
    try:
        yield
    finally:
        os.dup2(saved, 0)
        for fd in (saved, read_end, write_end):
            os.close(fd)


@pytest.fixture
def session_with(tmp_path: Path, raven_policy) -> Callable[[list[dict]], GuardSession]:
    raven_policy(["recall_access_exec", "recall_verify"])
    return lambda entries: _session(tmp_path, entries)


def _session(tmp_path: Path, entries: list[dict]) -> GuardSession:
    (tmp_path / "inventory.yaml").write_text(yaml.safe_dump(entries))
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"inventory": {"files": ["inventory.yaml"]}, "guard": {"policy": "policy.yaml"},
                                   "home": str(tmp_path / "home")}))
    settings = config.load(cfg)
    pol = policy.load(tmp_path / "policy.yaml")
    return GuardSession(settings=settings, policy=pol, profile=pol.profile("raven"), redactor=ValueRedactor({}),
                        audit=AuditLog(tmp_path / "audit.jsonl", str))


@pytest.mark.parametrize("reader", READERS)
def test_access_exec_children_read_no_stdin(session_with, stream_on_stdin: None, reader: str) -> None:
    session = session_with([{"id": "box", "kind": "host", "access": ["export A=1"]}])
    result = server.call(session, "recall_access_exec", {"id": "box", "command": f"{reader}; echo end", "timeout": 20})
    assert not result.is_error, result.content[0].text
    stdout = result.structured_content["stdout"]
    assert "jsonrpc" not in stdout and stdout.rstrip().endswith("end"), stdout
    assert os.read(0, len(STREAM)) == STREAM   # the stream is still there for the server to read


@pytest.mark.parametrize("reader", READERS)
def test_verify_children_read_no_stdin(tmp_path: Path, session_with, stream_on_stdin: None,
                                       monkeypatch: pytest.MonkeyPatch, reader: str) -> None:
    monkeypatch.setenv("PATH", f"{FAKEBIN}:/usr/bin:/bin")
    setup = tmp_path / "env.sh"   # the owner's env script, which the sweep sources before the proof
    # The sweep may run in a read-only sandbox: the script says what it read by failing, not by a file.
    setup.write_text(f"if {{ {reader}; }} | grep -q jsonrpc; then exit 9; fi\n")
    session = session_with([{"id": "ops", "kind": "cluster", "access": [f"source {setup}"],
                                   "verify": "kubectl --context good get nodes"}])
    result = server.call(session, "recall_verify", {"ids": ["ops"]})
    assert not result.is_error, result.content[0].text
    (row,) = result.structured_content["results"]
    assert row["status"] == "ok", row   # `failed` with "access step 1" if the step read anything
    assert os.read(0, len(STREAM)) == STREAM
