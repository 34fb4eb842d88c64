"""`muninn forget` end to end on the real stack: an agent remembers a fact through a real MCP client,
the owner forgets it with the CLI, and then neither search (vectors or keywords, in a new agent
session) nor any reader's keyword index returns it; the removal is in the audit log and `muninn
audit` shows it. The MCP server takes queries of 1, 1,000 and 10,000 characters without a traceback."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest
import yaml
from mcp import Client, StdioServerParameters

from muninn.core import accounts, credentials
from muninn.core import config as muninn_config
from muninn.core import policy as policy_mod
from muninn.plugins.mcp import audit
from muninn.plugins.search import keyword, reader_index

pytestmark = pytest.mark.integration

WORD = "zorblaxquux"   # in no other file: a keyword hit can only be the remembered fact
LOG_LINE = "2025-06-03T04:12:09Z ERROR kafka.consumer lag=48211 partition=7 group=billing retry in 30s\n"


def _policy(account: str) -> dict[str, Any]:
    return {"version": 1,
            "areas": {"shared": "viking://resources/shared", "raven": "viking://resources/agents/raven"},
            "readers": {
                "owner": {"kind": "owner", "account": account, "user": "owner",
                          "areas": {"shared": "manage", "raven": "manage"},
                          "tools": ["recall_search", "recall_read"]},
                "raven": {"kind": "agent", "account": account, "user": "raven",
                          "areas": {"shared": "read", "raven": "write"}, "remember_to": "raven",
                          "tools": ["recall_search", "recall_read", "recall_remember"]}}}


@pytest.fixture(scope="module")
def world(stack, tmp_path_factory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("forget")
    account, owner = stack.new_account("fgt")
    raven_key = stack.root.register_user(account, "raven", "user")
    for folder in ("viking://resources/shared", "viking://resources/agents", "viking://resources/agents/raven"):
        owner.ensure_dir(folder)
    owner.write("viking://resources/shared/runbook.md", "# Kafka runbook\nRestart the billing consumers.\n",
                wait=True)
    owner.wait()
    policy_file = tmp / "policy.yaml"
    policy_file.write_text(yaml.safe_dump(_policy(account)))
    cfg = yaml.safe_load(stack.config_path.read_text())
    cfg["guard"] = {"policy": str(policy_file), "audit_log": str(tmp / "audit.jsonl")}
    cfg["openviking"] = {"account": account, "user": "owner"}
    cfg["home"] = str(tmp / "home")
    accounts.record_created(tmp / "home", account, datetime.now(UTC) - timedelta(days=5))
    config = tmp / "muninn.yaml"
    config.write_text(yaml.safe_dump(cfg))
    ring = credentials.for_server(muninn_config.load(config))
    ring.set(credentials.user_key_name(account, "raven"), raven_key)
    ring.set(credentials.user_key_name(account, "owner"), owner._api_key)
    owner.close()
    return {"account": account, "config": config, "audit": tmp / "audit.jsonl", "env": stack.env}


Script = Callable[[Client], Awaitable[dict[str, Any]]]


def _session(world: dict[str, Any], script: Script) -> dict[str, Any]:
    params = StdioServerParameters(command=sys.executable, env=world["env"],
                                   args=["-m", "muninn", "mcp", "--profile", "raven", "--config", str(world["config"])])

    async def main() -> dict[str, Any]:
        async with Client(params, read_timeout_seconds=180) as client:
            return await script(client)

    return anyio.run(main)


def _text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def _uris(result) -> list[str]:
    return [h["uri"] for h in (result.structured_content or {}).get("hits", [])]


def _indexed(world: dict[str, Any]) -> dict[str, list[str]]:
    """What each reader's keyword index (and the CLI's own) returns for WORD."""
    settings = muninn_config.load(world["config"])
    policy = policy_mod.load(settings.paths.policy)
    paths = {name: reader_index.index_path(settings, p) for name, p in policy.profiles.items()}
    paths["cli"] = settings.paths.search_index()
    out: dict[str, list[str]] = {}
    for name, path in paths.items():
        if not path.exists():
            out[name] = []
            continue
        index = keyword.KeywordIndex(path)
        try:
            out[name] = [c.uri for c in index.candidates(WORD, "viking://resources", 20)]
        finally:
            index.close()
    return out


def _cli(stack, world, *args: str, input: str | None = None):
    return stack.cli("--config", str(world["config"]), *args, input=input)


def test_remembered_then_forgotten_is_found_nowhere(stack, world: dict[str, Any]) -> None:
    async def remember(client: Client) -> dict[str, Any]:
        out = {"remember": await client.call_tool("recall_remember", {
            "text": f"The {WORD} cache on build-box filled the disk; flushed it by hand.",
            "title": f"{WORD} cache filled the disk"})}
        out["found"] = await client.call_tool("recall_search", {"query": WORD, "since": "1h"})
        return out

    before = _session(world, remember)
    assert not before["remember"].is_error, _text(before["remember"])
    uri = before["remember"].structured_content["uri"]
    assert uri in _uris(before["found"]), before["found"].structured_content
    assert uri in _indexed(world)["raven"] and uri in _indexed(world)["owner"]

    # Without a terminal and without --yes, nothing is removed.
    asked = _cli(stack, world, "forget", uri)
    assert asked.returncode == 8 and "--yes" in asked.stderr and "Traceback" not in asked.stderr
    done = _cli(stack, world, "forget", uri, "--yes", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["removed"][0]["uri"] == uri
    assert json.loads(done.stdout)["removed"][0]["written_by"] == "raven"

    assert all(uri not in hits for hits in _indexed(world).values()), _indexed(world)

    async def search(client: Client) -> dict[str, Any]:
        return {"q": await client.call_tool("recall_search", {"query": f"{WORD} cache filled the disk"}),
                "read": await client.call_tool("recall_read", {"uri": uri})}

    after = _session(world, search)   # a new session walks raven's areas again
    assert uri not in _uris(after["q"]), after["q"].structured_content
    assert after["read"].is_error
    cli = _cli(stack, world, "search", WORD, "--json", "--no-rerank")
    assert cli.returncode == 0, cli.stderr
    assert uri not in [h["uri"] for h in json.loads(cli.stdout)["hits"]]

    lines = [x for x in audit.read(world["audit"]) if x["tool"] == "forget"]
    assert len(lines) == 1 and lines[0]["arguments"] == {"uri": uri} and lines[0]["decision"] == "removed"
    assert lines[0]["who"] and lines[0]["ts"]
    shown = _cli(stack, world, "audit", "--tool", "forget", "--json")
    rows = json.loads(shown.stdout)["rows"]
    assert [(r["tool"], r["target"], r["decision"]) for r in rows] == [("forget", uri, "removed")]


@pytest.mark.parametrize("uri, code, words", [
    ("viking://resources/shared/runbook.md", 8, "not in an area agents"),
    ("viking://resources/agents/raven", 2, "whole area"),
    ("viking://resources/agents/raven/", 2, "folder"),
    ("viking://resources/agents/raven/no-such-fact.md", 5, ""),
    ("/etc/passwd", 2, "not a viking:// URI"),
    ("viking://resources/agents/raven/../../shared/runbook.md", 8, "not in an area agents"),
])
def test_what_forget_refuses_on_the_real_server(stack, world: dict[str, Any], uri: str, code: int,
                                                words: str) -> None:
    out = _cli(stack, world, "forget", uri, "--yes")
    assert out.returncode == code, out.stderr
    assert words in out.stderr and "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1, out.stderr


def test_a_folder_in_an_agent_area_is_refused(stack, world: dict[str, Any]) -> None:
    from muninn.core.client import OpenViking

    settings = muninn_config.load(world["config"])
    with OpenViking.user(settings, world["account"], "owner") as owner:
        owner.write("viking://resources/agents/raven/sub/a.md", "# a\nkept\n", wait=True)
    out = _cli(stack, world, "forget", "viking://resources/agents/raven/sub", "--yes")
    assert out.returncode == 2 and "folder" in out.stderr, out.stderr
    with OpenViking.user(settings, world["account"], "owner") as owner:
        assert "kept" in owner.read("viking://resources/agents/raven/sub/a.md")


@pytest.mark.parametrize("chars", [1, 1_000, 10_000])
def test_mcp_search_takes_queries_of_any_length(world: dict[str, Any], chars: int) -> None:
    """Up to the tool's 1,000-character cap a query is searched; beyond it the call is refused with one
    sentence naming the cap, and the server keeps answering."""
    query = "k" if chars == 1 else (LOG_LINE * (chars // len(LOG_LINE) + 1))[:chars]

    async def script(client: Client) -> dict[str, Any]:
        return {"q": await client.call_tool("recall_search", {"query": query}),
                "after": await client.call_tool("recall_search", {"query": "kafka runbook"})}

    out = _session(world, script)
    text = _text(out["q"])
    assert "Traceback" not in text and "File \"" not in text
    if chars <= 1_000:
        assert not out["q"].is_error, text
    else:
        assert out["q"].is_error and "1000" in text.replace(",", ""), text
    assert not out["after"].is_error, _text(out["after"])


def _at_a_terminal(stack, world, answer: str, *args: str) -> tuple[int, str]:
    """`muninn forget` with a real terminal on stdin, answering `answer` to its question."""
    import os
    import pty
    import subprocess

    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "muninn", "--config", str(world["config"]), "forget", *args],
                                stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=stack.env, text=True)
        os.write(master, answer.encode())
        out, err = proc.communicate(timeout=300)
    finally:
        os.close(master)
        os.close(slave)
    return proc.returncode, err


@pytest.mark.parametrize("answer, removed", [("n\n", False), ("\n", False), ("y\n", True)])
def test_forget_asks_at_a_terminal(stack, world: dict[str, Any], answer: str, removed: bool) -> None:
    from muninn.core.client import OpenViking
    from muninn.core.errors import NotFound

    uri = f"viking://resources/agents/raven/asked-{abs(hash(answer))}.md"
    settings = muninn_config.load(world["config"])
    with OpenViking.user(settings, world["account"], "raven") as raven:
        raven.write(uri, "---\nwritten_by: raven\n---\n# asked\nto be asked about\n", wait=True)
    code, err = _at_a_terminal(stack, world, answer, uri)
    assert "Remove 1 fact(s)" in err and "Traceback" not in err
    assert code == (0 if removed else 8), err
    with OpenViking.user(settings, world["account"], "owner") as owner:
        try:
            owner.read(uri)
            there = True
        except NotFound:
            there = False
    assert there is not removed
