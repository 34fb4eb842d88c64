"""An owner-only area nested inside one an agent may read, end to end against the real server: the owner's
sync writes into it, and no entry point of the agent's (recall_search plain, briefing, target, only, since,
recall_status counts, recall_list, recall_read, `muninn search --profile`) ever shows it, while the owner
still finds it, an area re-granted deeper is found again, and `policy check` sees a planted leak."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp import Client
from test_mcp_server import _session, _text

from muninn.core import config as muninn_config
from muninn.core import credentials
from muninn.core import policy as policy_mod
from muninn.core.client import OpenViking
from muninn.export import sync
from muninn.plugins.search import keyword, reader_index
from muninn.plugins.stack import policy_apply

pytestmark = pytest.mark.integration

SHARED = "viking://resources/shared"
PRIVATE = f"{SHARED}/private"
OPEN = f"{PRIVATE}/open"
# One made-up word per file: a hit on it can only be that file.
WORDS = {SHARED: "kestrelbay", PRIVATE: "quokkavault", OPEN: "wombatgate"}
SECRET_URI = f"{PRIVATE}/salary-review.md"
OPEN_URI = f"{OPEN}/handbook.md"
RUNBOOK_URI = f"{SHARED}/runbook.md"
RAVEN_TOOLS = ["recall_search", "recall_read", "recall_list", "recall_status"]


def _policy(account: str) -> dict[str, Any]:
    return {"version": 1,
            "areas": {"shared": SHARED, "sharedprivate": PRIVATE, "reopen": OPEN,
                      "raven": "viking://resources/agents/raven"},
            "readers": {
                "owner": {"kind": "owner", "account": account, "user": "owner", "remember_to": "shared",
                          "areas": {"shared": "manage", "sharedprivate": "manage", "reopen": "manage",
                                    "raven": "manage"}},
                "raven": {"kind": "agent", "account": account, "user": "raven", "tools": RAVEN_TOOLS,
                          "areas": {"shared": "read", "reopen": "read", "raven": "write"}}}}


def _fact(title: str, word: str) -> str:
    today = dt.date.today().isoformat()
    return f"---\nsource: notes\ndate: {today}\n---\n# {title}\nThe {word} review lists what {word} decided.\n"


@pytest.fixture(scope="module")
def world(stack, tmp_path_factory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("nested")
    account = f"nst{uuid.uuid4().hex[:8]}"
    policy_file = tmp / "policy.yaml"
    policy_file.write_text(yaml.safe_dump(_policy(account)))
    cfg = yaml.safe_load(stack.config_path.read_text())
    cfg.update({"home": str(tmp / "home"), "guard": {"policy": str(policy_file), "audit_log": str(tmp / "audit.jsonl")},
                "openviking": {"account": account, "user": "owner"}})
    config = tmp / "muninn.yaml"
    config.write_text(yaml.safe_dump(cfg))
    settings = muninn_config.load(config)
    pol = policy_mod.load(policy_file)
    # The stack's root key, in this workspace's scope of the keyring (its home is its own).
    credentials.for_server(settings).set(credentials.root_key_name(), stack.root._api_key)
    assert policy_apply.apply(settings, pol, say=lambda m: None).ok
    files = {SHARED: ("runbook.md", "Runbook"), PRIVATE: ("salary-review.md", "Salary review"),
             OPEN: ("handbook.md", "Handbook")}
    with OpenViking.user(settings) as owner:
        for area, (name, title) in files.items():
            src = tmp / "src" / name.removesuffix(".md")
            src.mkdir(parents=True)
            (src / name).write_text(_fact(title, WORDS[area]))
            sync.sync(owner, src, area, settings=settings)     # the after-sync hook feeds every reader's index
        owner.wait()
    return {"account": account, "config": config, "settings": settings, "policy": pol, "env": stack.env,
            "tmp": tmp}


def _held(world: dict[str, Any], reader: str) -> set[str]:
    path = reader_index.index_path(world["settings"], world["policy"].profile(reader))
    return set(keyword.uris(path)) if path.exists() else set()


def test_the_owners_sync_never_puts_the_owner_only_file_into_the_agents_index(world) -> None:
    raven, owner = _held(world, "raven"), _held(world, "owner")
    assert SECRET_URI not in raven and {RUNBOOK_URI, OPEN_URI} <= raven, raven
    assert {RUNBOOK_URI, SECRET_URI, OPEN_URI} <= owner, owner


def _search(client: Client, word: str, **more: Any):
    return client.call_tool("recall_search", {"query": f"{word} review", "k": 10, **more})


@pytest.fixture(scope="module")
def agent(world) -> dict[str, Any]:
    secret = WORDS[PRIVATE]

    async def script(client: Client) -> dict[str, Any]:
        return {
            "plain": await _search(client, secret),
            "briefing": await _search(client, secret, briefing=True, tokens=2000),
            "target": await _search(client, secret, target=SHARED),
            "targets": await _search(client, secret, target=[SHARED, OPEN]),
            "target_private": await _search(client, secret, target=PRIVATE),
            "only": await _search(client, secret, only=["shared"]),
            "only_both": await _search(client, secret, only=["shared", "reopen"]),
            "since": await _search(client, secret, since="7d"),
            "since_briefing": await _search(client, secret, since="30d", briefing=True),
            "regrant": await _search(client, WORDS[OPEN]),
            "status": await client.call_tool("recall_status", {}),
            "list": await client.call_tool("recall_list", {"uri": SHARED}),
            "list_private": await client.call_tool("recall_list", {"uri": PRIVATE}),
            "read": await client.call_tool("recall_read", {"uri": SECRET_URI}),
            "read_respelt": await client.call_tool("recall_read", {"uri": f"{OPEN}/../salary-review.md"}),
            "read_open": await client.call_tool("recall_read", {"uri": OPEN_URI}),
        }

    return _session(world, "raven", script)


SEARCHES = ["plain", "briefing", "target", "targets", "only", "only_both", "since", "since_briefing"]


@pytest.mark.parametrize("call", SEARCHES)
def test_no_search_of_the_agent_shows_the_owner_only_file(agent, call: str) -> None:
    result = agent[call]
    assert not result.is_error, _text(result)
    shown = _text(result) + json.dumps(result.structured_content)
    # The query is echoed back; the file's name, title and text must not be.
    for trace in ("salary-review", "Salary review", f"what {WORDS[PRIVATE]} decided"):
        assert trace not in shown, shown[:2000]
    hits = [h["uri"] for h in result.structured_content["hits"]]
    assert hits and not any(u.startswith(PRIVATE + "/") and not u.startswith(OPEN + "/") for u in hits), hits


@pytest.mark.parametrize("call", ["target_private", "list_private", "read", "read_respelt"])
def test_the_agent_is_refused_the_owner_only_area_by_name(agent, call: str) -> None:
    result = agent[call]
    assert result.is_error, _text(result)
    assert f"what {WORDS[PRIVATE]} decided" not in _text(result)


def test_an_area_re_granted_deeper_is_found_and_read_again(agent) -> None:
    hits = [h["uri"] for h in agent["regrant"].structured_content["hits"]]
    assert OPEN_URI in hits, hits
    assert not agent["read_open"].is_error and WORDS[OPEN] in _text(agent["read_open"])


def test_listing_the_enclosing_area_hides_the_nested_one(agent) -> None:
    entries = [e["uri"] for e in agent["list"].structured_content["entries"]]
    assert RUNBOOK_URI in entries and not any(e == PRIVATE or e.startswith(PRIVATE + "/") for e in entries), entries


def test_status_counts_each_file_once_in_the_area_that_decides_it(agent) -> None:
    rows = {r["area"]: r["files"] for r in agent["status"].structured_content["stores"]}
    assert rows == {"shared": 1, "reopen": 1, "raven": 0}, rows
    assert agent["status"].structured_content["not_readable"] == [PRIVATE]
    assert f"not readable inside them: {PRIVATE}" in _text(agent["status"])


def test_the_owner_still_finds_the_owner_only_file(world) -> None:
    async def script(client: Client) -> dict[str, Any]:
        return {"plain": await _search(client, WORDS[PRIVATE]), "status": await client.call_tool("recall_status", {})}

    got = _session(world, "owner", script)
    assert SECRET_URI in [h["uri"] for h in got["plain"].structured_content["hits"]]
    rows = {r["area"]: r["files"] for r in got["status"].structured_content["stores"]}
    assert rows == {"shared": 1, "sharedprivate": 1, "reopen": 1, "raven": 0}, rows


def _cli(world: dict[str, Any], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "muninn", "--config", str(world["config"]), *args],
                          capture_output=True, text=True, env=world["env"], timeout=300)


@pytest.mark.parametrize("reader, finds", [("raven", False), ("owner", True)])
def test_the_cli_searches_as_a_reader(world, reader: str, finds: bool) -> None:
    done = _cli(world, "search", f"{WORDS[PRIVATE]} review", "-k", "10", "--profile", reader, "--json")
    assert done.returncode == 0, done.stderr
    uris = [h["uri"] for h in json.loads(done.stdout)["hits"]]
    assert (SECRET_URI in uris) is finds, uris
    if not finds:
        assert f"what {WORDS[PRIVATE]} decided" not in done.stdout and "Salary review" not in done.stdout


def test_the_cli_refuses_a_target_the_reader_may_not_read(world) -> None:
    done = _cli(world, "search", "review", "--profile", "raven", "--target", PRIVATE)
    assert done.returncode != 0 and "sharedprivate" in done.stderr, (done.returncode, done.stderr)


@pytest.mark.parametrize("uri, allowed", [(SECRET_URI, False), (OPEN_URI, True), (RUNBOOK_URI, True),
                                          (f"{SHARED}/x/../private/salary-review.md", False),
                                          (f"{SHARED}/%70rivate/salary-review.md", False)])
def test_guard_check_decides_as_the_server(world, uri: str, allowed: bool) -> None:
    done = _cli(world, "guard", "check", "--profile", "raven", "recall_read", uri)
    assert done.returncode == (0 if allowed else 1), (done.stdout, done.stderr)


def test_policy_show_names_the_area_that_decides(world) -> None:
    done = _cli(world, "policy", "show", "--json")
    assert done.returncode == 0, done.stderr
    rows = {r["area"]: r for r in json.loads(done.stdout)["areas"]}
    assert rows["sharedprivate"]["decided_by"] == "sharedprivate" and rows["sharedprivate"]["inside"] == "shared"
    assert rows["sharedprivate"]["levels"] == {"owner": "manage", "raven": None}
    assert rows["reopen"]["levels"] == {"owner": "manage", "raven": "read"}
    text = _cli(world, "policy", "show")
    assert text.returncode == 0 and "sharedprivate" in text.stdout and "raven none" in text.stdout, text.stdout


def test_policy_check_fails_on_a_leak_in_a_readers_index_until_it_is_refreshed(world) -> None:
    clean = _cli(world, "policy", "check", "--json")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert json.loads(clean.stdout)["indexes"] == []
    # What the owner's sync did before the fix: the owner-only file in the agent's index.
    index = reader_index.index_path(world["settings"], world["policy"].profile("raven"))
    keyword.index_facts(index, {SECRET_URI: _fact("Salary review", WORDS[PRIVATE])})
    leaked = _cli(world, "policy", "check", "--json")
    assert leaked.returncode == 1, leaked.stderr
    found = json.loads(leaked.stdout)["indexes"]
    assert [(x["reader"], x["files"], x["examples"]) for x in found] == [("raven", 1, [SECRET_URI])]
    assert "muninn search-index --profile raven" in _cli(world, "policy", "check").stderr
    # Defence in depth: with the leak still in its index, a search as the agent does not show it.
    searched = _cli(world, "search", f"{WORDS[PRIVATE]} review", "--profile", "raven", "--json", "--no-rerank")
    assert searched.returncode == 0, searched.stderr
    assert SECRET_URI not in [h["uri"] for h in json.loads(searched.stdout)["hits"]]
    fixed = _cli(world, "search-index", "--profile", "raven", "--no-vectors", "--json")
    assert fixed.returncode == 0, fixed.stderr
    assert _cli(world, "policy", "check").returncode == 0
    assert SECRET_URI not in _held(world, "raven")
    assert WORDS[PRIVATE].encode() not in Path(index).read_bytes()     # compacted: no trace in the file
