"""recall_search as a task's first call, through a real stdio MCP client against the real server: a
token-budgeted briefing in one call (the server's instructions say to make it first), and `target` as one
folder or a list of folders, each checked like any URI the reader touches."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from test_mcp_server import _session, _text, world  # noqa: F401  (the module's world fixture)

pytestmark = pytest.mark.integration

SHARED, RAVEN, BOB = "viking://resources/shared", "viking://resources/agents/raven", "viking://resources/agents/bob"
QUERY = "deploy runbook observation"

# (target, the folders every hit must lie in; None: refused before any search)
TARGETS = [
    (SHARED, [SHARED]),
    ([SHARED], [SHARED]),
    ([RAVEN], [RAVEN]),
    ([SHARED, RAVEN], [SHARED, RAVEN]),
    ([SHARED, SHARED], [SHARED]),
    ([BOB], None),
    ([SHARED, BOB], None),
    (f"{RAVEN}/../bob", None),
    ([f"{RAVEN}/%2e%2e/bob"], None),
    (["file:///etc/passwd"], None),
    ([SHARED] * 21, None),
]
BUDGETS = [100, 300, 2000]


@pytest.fixture(scope="module")
def calls(world: dict[str, Any]) -> dict[str, Any]:  # noqa: F811
    async def script(client: Client) -> dict[str, Any]:
        out: dict[str, Any] = {"instructions": client.instructions}
        out["targets"] = [await client.call_tool("recall_search", {"query": QUERY, "k": 10, "target": target})
                          for target, _ in TARGETS]
        out["briefings"] = [await client.call_tool("recall_search", {"query": QUERY, "briefing": True,
                                                                     "tokens": budget}) for budget in BUDGETS]
        out["brief_both"] = await client.call_tool("recall_search", {"query": QUERY, "briefing": True,
                                                                     "target": [SHARED, RAVEN]})
        out["brief_tiny"] = await client.call_tool("recall_search", {"query": QUERY, "briefing": True, "tokens": 5})
        return out

    return _session(world, "raven", script)


@pytest.mark.parametrize("i", range(len(TARGETS)), ids=[str(t[0])[:60] for t in TARGETS])
def test_target_is_a_folder_or_a_list_and_hits_stay_inside(calls: dict[str, Any], i: int) -> None:
    target, inside = TARGETS[i]
    result = calls["targets"][i]
    if inside is None:
        assert result.is_error, (target, _text(result))
        return
    assert not result.is_error, _text(result)
    uris = [h["uri"] for h in result.structured_content["hits"]]
    assert uris and len(uris) == len(set(uris)), (target, uris)
    assert all(any(u.startswith(a + "/") for a in inside) for u in uris), (target, uris)
    if len(inside) == 2:
        assert {a for a in inside for u in uris if u.startswith(a + "/")} == set(inside), "both folders searched"


@pytest.mark.parametrize("i", range(len(BUDGETS)), ids=[str(b) for b in BUDGETS])
def test_a_briefing_is_one_call_within_its_token_budget(calls: dict[str, Any], i: int) -> None:
    result = calls["briefings"][i]
    assert not result.is_error, _text(result)
    data = result.structured_content
    assert data["briefing"] is True and data["budget"] == BUDGETS[i]
    assert data["hits"] and 0 < data["tokens"] <= BUDGETS[i], data["tokens"]
    # Every entry names where it came from, and what an agent wrote is labelled as data.
    for hit in data["hits"]:
        assert hit["uri"] in _text(result)
    if any(h["untrusted"] for h in data["hits"]):
        assert "<untrusted-data" in _text(result)


def test_a_bigger_budget_holds_at_least_as_much(calls: dict[str, Any]) -> None:
    counts = [len(r.structured_content["hits"]) for r in calls["briefings"]]
    assert counts == sorted(counts) and counts[-1] > counts[0], counts


def test_a_briefing_over_two_folders_brings_both(calls: dict[str, Any]) -> None:
    data = calls["brief_both"].structured_content
    assert {a for a in (SHARED, RAVEN) for h in data["hits"] if h["uri"].startswith(a + "/")} == {SHARED, RAVEN}


def test_a_budget_below_the_floor_is_refused_by_the_schema(calls: dict[str, Any]) -> None:
    assert calls["brief_tiny"].is_error


def test_the_server_instructions_say_to_brief_first_and_name_only_held_tools(calls: dict[str, Any]) -> None:
    text = calls["instructions"] or ""
    rules = [line for line in text.splitlines() if line.startswith("- ")]
    assert rules and "briefing: true" in rules[0] and "recall_search" in rules[0], text
