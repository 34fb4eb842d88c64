"""Undeclared secrets end to end on the real stack, with no secrets file at all.

A notes folder holds an AWS key pair written `AKIA… / <secret>`, a German Wi-Fi key, a password on a
command line and a bot token alone under a heading. `muninn export all` + `muninn sync all`: none of
them is on the server, in any keyword index (the CLI's and each reader's), or in what `recall_read`
gives an agent over a real MCP client. A file written straight into the server (bypassing export)
that holds one: `muninn leak scan` reports it by URI and line with a fingerprint (never the value),
`muninn leak purge` leaves it as it is, `muninn redact review` lists it, and `recall_read` hides it.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import anyio
import pytest
import yaml
from mcp import Client, StdioServerParameters

from muninn.core import config as muninn_config
from muninn.core import credentials
from muninn.core import policy as policy_mod
from muninn.core.client import OpenViking
from muninn.plugins.search import keyword, reader_index

pytestmark = pytest.mark.integration

AWS_ID = "AKIAZ7QW2E3R4T5Y6U7I"
AWS_SECRET = "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"
WIFI = "Sommer2024!Haus"
DB_PW = "Tr0ub4dor&3x"
BOT = "Kq7Zr2Xv9Lw4Pn8Tm3Hs6Jd1Fb5Gc0Ny"
DIRECT = "Hp4Xk9Wq2Zm7Rt5Vn8Lb3Jc6Fd1Gs0Ty"
SECRETS = (AWS_SECRET, WIFI, DB_PW, BOT)


def _policy(account: str) -> dict[str, Any]:
    return {"version": 1,
            "areas": {"shared": "viking://resources/shared", "raven": "viking://resources/agents/raven"},
            "readers": {
                "owner": {"kind": "owner", "account": account, "user": "owner",
                          "areas": {"shared": "manage", "raven": "manage"}, "tools": ["recall_search", "recall_read"]},
                "raven": {"kind": "agent", "account": account, "user": "raven",
                          "areas": {"shared": "read", "raven": "write"}, "remember_to": "raven",
                          "tools": ["recall_search", "recall_read", "recall_list"]}}}


@pytest.fixture(scope="module")
def world(stack, tmp_path_factory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("undeclared")
    account, owner = stack.new_account("und")
    raven_key = stack.root.register_user(account, "raven", "user")
    for folder in ("viking://resources/shared", "viking://resources/agents", "viking://resources/agents/raven"):
        owner.ensure_dir(folder)
    notes = tmp / "notes"
    notes.mkdir()
    (notes / "aws.md").write_text(f"# AWS for the backup bucket\n\nkeys: {AWS_ID} / {AWS_SECRET}\n"
                                  "Rotate them after the audit.\n")
    (notes / "home.md").write_text(f"# Home network\n\nWLAN-Schlüssel: {WIFI}\nThe router is in the hallway.\n")
    (notes / "db.md").write_text(f"# Restore the shop database\n\n```\nmysql -h db1 -u root -p'{DB_PW}' shop"
                                 " < dump.sql\n```\n")
    (notes / "bot.md").write_text(f"# Deploy bot token\n\n{BOT}\n\nUsed by the release job.\n")
    (notes / "plain.md").write_text("# Kafka runbook\nRestart the billing consumers with systemctl.\n")
    policy_file = tmp / "policy.yaml"
    policy_file.write_text(yaml.safe_dump(_policy(account)))
    cfg = yaml.safe_load(stack.config_path.read_text())
    cfg.update({"guard": {"policy": str(policy_file), "audit_log": str(tmp / "audit.jsonl")},
                "openviking": {"account": account, "user": "owner"}, "home": str(tmp / "home"),
                "export": {"out": str(tmp / "exports")},
                "sources": [{"kind": "notes", "path": str(notes), "area": "viking://resources/shared"}]})
    config = tmp / "muninn.yaml"
    config.write_text(yaml.safe_dump(cfg))
    settings = muninn_config.load(config)
    ring = credentials.for_server(settings)
    ring.set(credentials.user_key_name(account, "raven"), raven_key)
    ring.set(credentials.user_key_name(account, "owner"), owner._api_key)
    owner.close()
    world = {"account": account, "config": config, "env": stack.env, "tmp": tmp}
    for args in (("export", "all"), ("sync", "all")):
        done = stack.cli("--config", str(config), *args)
        assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-2000:])
        for s in SECRETS:
            assert s not in done.stdout + done.stderr
        world[args[0]] = done
    return world


def _server_files(world: dict[str, Any], root: str = "viking://resources") -> dict[str, str]:
    settings = muninn_config.load(world["config"])
    out: dict[str, str] = {}
    with OpenViking.user(settings) as client:
        stack = [root]
        while stack:
            folder = stack.pop()
            for e in client.ls(folder):
                if e.is_dir:
                    stack.append(e.uri)
                else:
                    out[e.uri] = client.read(e.uri)
    return out


def _indexes(world: dict[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """Every document of every keyword index: the CLI's own and each reader's."""
    settings = muninn_config.load(world["config"])
    policy = policy_mod.load(settings.paths.policy)
    paths = {name: reader_index.index_path(settings, p) for name, p in policy.profiles.items()}
    paths["cli"] = settings.paths.search_index()
    out: dict[str, list[tuple[str, str]]] = {}
    for name, path in paths.items():
        index = keyword.KeywordIndex(path)
        try:
            out[name] = list(index.documents())
            for secret in SECRETS:   # and a keyword query for each of the secret's words finds nothing
                for word in {w for w in re.split(r"[^A-Za-z0-9]+", secret) if len(w) > 5}:
                    assert index.candidates(f'"{word}"', "viking://resources", 50) == [], (name, word)
        finally:
            index.close()
    return out


def _read_as_raven(world: dict[str, Any], uris: list[str], query: str | None = None) -> dict[str, str]:
    """What raven gets from recall_read of each URI (and, under "search", from recall_search for `query`)."""
    params = StdioServerParameters(command=sys.executable, env=world["env"],
                                   args=["-m", "muninn", "mcp", "--profile", "raven", "--config", str(world["config"])])

    def text(got) -> str:
        return "\n".join(c.text for c in got.content if getattr(c, "type", "") == "text")

    async def main() -> dict[str, str]:
        async with Client(params, read_timeout_seconds=180) as client:
            out = {uri: text(await client.call_tool("recall_read", {"uri": uri})) for uri in uris}
            if query:
                got = await client.call_tool("recall_search", {"query": query, "k": 10})
                out["search"] = text(got) + json.dumps(got.structured_content or {})
            return out

    return anyio.run(main)


def test_export_redacts_and_reports_undeclared_secrets(world: dict[str, Any]) -> None:
    said = world["export"].stderr
    assert "undeclared-secret" in said
    files = {p.name: p.read_text() for p in (world["tmp"] / "exports").rglob("*.md")}
    text = "\n".join(files.values())
    assert "Kafka runbook" in text and "mysql -h db1" in text
    for s in SECRETS:
        assert s not in text


def test_nothing_undeclared_reached_the_server_or_an_index(world: dict[str, Any]) -> None:
    files = _server_files(world, "viking://resources/shared")
    assert len(files) >= 5 and any("WLAN" in t for t in files.values())
    for uri, text in files.items():
        for s in SECRETS:
            assert s not in text, uri
    indexes = _indexes(world)
    assert set(indexes) == {"cli", "owner", "raven"}
    for name, docs in indexes.items():
        # The indexes hold the notes, so finding no secret in them means something.
        assert any("WLAN" in text for _, text in docs), name
        for uri, text in docs:
            for s in SECRETS:
                assert s not in text, (name, uri)


def test_an_agent_reads_no_undeclared_secret(world: dict[str, Any]) -> None:
    uris = sorted(_server_files(world, "viking://resources/shared"))
    got = _read_as_raven(world, uris)
    assert any("Home network" in t for t in got.values())
    for uri, text in got.items():
        for s in SECRETS:
            assert s not in text, uri


def test_a_file_written_past_export_is_reported_not_purged_and_listed(stack, world: dict[str, Any]) -> None:
    settings = muninn_config.load(world["config"])
    uri = "viking://resources/agents/raven/handover.md"
    body = f"# Handover\n\nThe staging deploy bot:\n\n| bot | token |\n|---|---|\n| deployer | {DIRECT} |\n"
    with OpenViking.user(settings) as client:
        client.write(uri, body, wait=True)
    cli = ("--config", str(world["config"]))
    scan = stack.cli(*cli, "leak", "scan", "--json", "--full")
    assert scan.returncode == 1, scan.stderr[-2000:]
    assert DIRECT not in scan.stdout + scan.stderr
    found = {f["uri"]: f for f in json.loads(scan.stdout)["found"]}
    assert set(found) == {uri}, found
    [finding] = found[uri]["findings"]
    assert finding["reason"] == "undeclared-secret" and finding["line"] == 7
    assert finding["fingerprint"].startswith("undeclared-secret:")
    purge = stack.cli(*cli, "leak", "purge", "--json")
    assert DIRECT not in purge.stdout + purge.stderr
    assert [p["action"] for p in json.loads(purge.stdout)["files"]] == ["reported"]
    with OpenViking.user(settings) as client:
        assert client.read(uri) == body        # a reader's words are never rewritten on a guess
    review = stack.cli(*cli, "redact", "review", "--json")
    assert review.returncode == 0, review.stderr
    assert DIRECT not in review.stdout
    rows = json.loads(review.stdout)["found"]
    assert {"where": "server", "file": uri, "line": 7, "fingerprint": finding["fingerprint"]}.items() <= next(
        r for r in rows if r["where"] == "server").items()
    assert any(r["where"] == "export" and r["file"].endswith(".md") for r in rows)
    seen = _read_as_raven(world, [uri], query="handover staging deploy bot deployer token")
    assert "Handover" in seen[uri] and DIRECT not in seen[uri]
    assert "handover" in seen["search"].lower() and DIRECT not in seen["search"]
    # Allowed by its fingerprint: no longer reported.
    allow = stack.cli(*cli, "redact", "allow", finding["fingerprint"], "--note", "test fixture")
    assert allow.returncode == 0, allow.stderr
    again = stack.cli(*cli, "leak", "scan", "--json", "--full")
    assert again.returncode == 0, again.stdout[-2000:]
