"""Nested areas: the deepest area with an ACL in the reader's account decides (policy.Profile.level_at), and
every check (the guard, the index routes, forget, untrusted writers, policy show) asks that one decision.
Cases by class: nesting depth, siblings sharing a string prefix, read against write, accounts, URIs
that are not canonical, and what the loader refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from muninn.cli import app
from muninn.core import config
from muninn.core import policy as policy_mod
from muninn.core.errors import ConfigError
from muninn.guards.policy import tools as tool_guard
from muninn.plugins.mcp import forget
from muninn.plugins.search import keyword, reader_index
from muninn.plugins.stack import policy_show

R = "viking://resources"
AREAS = {
    "shared": f"{R}/shared", "shared2": f"{R}/shared2", "sharedx": f"{R}/shared-x",
    "private": f"{R}/shared/private", "open": f"{R}/shared/private/open",
    "vault": f"{R}/shared/private/open/vault",
    "raven": f"{R}/agents/raven", "locked": f"{R}/agents/raven/locked", "inbox": f"{R}/agents/raven/locked/inbox",
    "unlisted": f"{R}/shared/unlisted",            # no reader of account home lists it: inherits shared
    "other": f"{R}/shared/other",                  # only a reader of another account lists it
}
READERS = {
    "owner": {"kind": "owner", "account": "home", "user": "owner", "remember_to": "shared",
              "areas": {"shared": "manage", "private": "manage", "open": "manage", "vault": "manage",
                        "raven": "manage", "locked": "manage", "inbox": "manage", "shared2": "read"}},
    "raven": {"kind": "agent", "account": "home", "user": "raven", "remember_to": "raven",
              "tools": ["recall_search", "recall_read", "recall_remember", "recall_list"],
              "areas": {"shared": "read", "open": "read", "raven": "write", "inbox": "write", "sharedx": "read"}},
    "guest": {"kind": "agent", "account": "lab", "user": "guest", "areas": {"shared": "read", "other": "read"}},
}

# (reader, uri, its level there): the deepest listed area of the reader's account decides.
LEVELS = [
    # depth: read, taken away, given back, taken away again
    ("raven", f"{R}/shared/runbook.md", "read"),
    ("raven", f"{R}/shared/deep/a/b/c.md", "read"),
    ("raven", f"{R}/shared/private", None),
    ("raven", f"{R}/shared/private/salary.md", None),
    ("raven", f"{R}/shared/private/deeper/x.md", None),
    ("raven", f"{R}/shared/private/open", "read"),
    ("raven", f"{R}/shared/private/open/handbook.md", "read"),
    ("raven", f"{R}/shared/private/open/vault/key.md", None),
    ("owner", f"{R}/shared/private/open/vault/key.md", "manage"),
    ("owner", f"{R}/shared/private/salary.md", "manage"),
    # siblings that share a string prefix are other areas
    ("raven", f"{R}/shared2/x.md", None),
    ("owner", f"{R}/shared2/x.md", "read"),
    ("raven", f"{R}/shared-x/x.md", "read"),
    ("raven", f"{R}/sharedprivate/x.md", None),
    ("raven", f"{R}/shared/privateer/x.md", "read"),     # not inside shared/private
    ("raven", f"{R}/shared/private-notes.md", "read"),
    ("raven", f"{R}/shared/privat", "read"),
    # write: its own area, then an owner-only folder in it, then a drop box inside that
    ("raven", f"{R}/agents/raven/obs.md", "write"),
    ("raven", f"{R}/agents/raven/locked/plan.md", None),
    ("raven", f"{R}/agents/raven/locked/inbox/note.md", "write"),
    ("raven", f"{R}/agents/raven-evil/x.md", None),
    # an area nobody of the account lists has no ACL there: its enclosing area decides
    ("raven", f"{R}/shared/unlisted/x.md", "read"),
    ("raven", f"{R}/shared/other/x.md", "read"),
    ("guest", f"{R}/shared/other/x.md", "read"),
    ("guest", f"{R}/shared/private/salary.md", "read"),   # no reader of `lab` lists private: no ACL there
    # outside every area
    ("raven", f"{R}/elsewhere.md", None),
    ("owner", f"{R}", None),
    ("raven", "viking://user/raven/memories/x.md", None),
    # not plain canonical text: judged none, never by its string prefix
    ("raven", f"{R}/shared/private/../runbook.md", None),
    ("raven", f"{R}/shared/./x.md", None),
    ("raven", f"{R}/shared//private/salary.md", None),
    ("raven", f"{R}/shared/%70rivate/salary.md", None),
    ("raven", f"{R}/shared\\private\\salary.md", None),
    ("raven", f"{R}/shared/x.md\x00", None),
    ("raven", f"{R}/shared/", None),
]


@pytest.fixture
def pol() -> policy_mod.Policy:
    return policy_mod.parse(yaml.safe_dump({"version": 1, "areas": AREAS, "readers": READERS}))


@pytest.mark.parametrize("reader, uri, level", LEVELS, ids=[f"{r}:{u.removeprefix(R)}" for r, u, _ in LEVELS])
def test_the_deepest_area_decides(pol, reader: str, uri: str, level: str | None) -> None:
    profile = pol.profile(reader)
    assert profile.level_at(uri) == level
    assert profile.may("read", uri) is (level is not None)
    assert profile.may("write", uri) is (level in ("write", "manage"))


# (uri as an agent may spell it, allowed for raven's recall_read): canonicalised first, then decided.
SPELLINGS = [
    (f"{R}/shared/x/../private/salary.md", False),
    (f"{R}/shared/private/../runbook.md", True),
    (f"{R}/shared/%70rivate/salary.md", False),
    (f"{R}/shared/%2570rivate/salary.md", False),
    (f"{R}/shared//private/salary.md", False),
    ("VIKING://resources/shared/private/salary.md", False),
    (f"{R}/shared\\private\\salary.md", False),
    (f"{R}/shared/private./salary.md", False),
    (f"{R}/shared/\uff50rivate/salary.md", False),        # fullwidth p folds to p
    (f"{R}/shared/private/open/../salary.md", False),
    (f"{R}/shared/private/open/./handbook.md", True),
    (f"{R}/shared/private/open/vault/../handbook.md", True),
]


@pytest.mark.parametrize("uri, allowed", SPELLINGS, ids=[u.removeprefix(R)[:50] for u, _ in SPELLINGS])
def test_the_guard_canonicalises_then_asks_the_same_decision(pol, uri: str, allowed: bool) -> None:
    got = tool_guard.check_call(pol.profile("raven"), "recall_read", uri)
    assert got.allowed is allowed, got.reason
    if not allowed and got.canonical_uri:
        assert "private" in got.reason


def test_a_refusal_names_the_area_that_decided(pol) -> None:
    got = tool_guard.check_call(pol.profile("raven"), "recall_read", f"{R}/shared/private/salary.md")
    assert not got.allowed and "area private" in got.reason and "no access" in got.reason
    wrote = tool_guard.check_call(pol.profile("raven"), "recall_remember", f"{R}/shared/private/open/x.md")
    assert not wrote.allowed and "only read" in wrote.reason
    assert tool_guard.check_call(pol.profile("raven"), "recall_remember", f"{R}/agents/raven/locked/inbox/n.md").allowed


def test_untrusted_writers_stop_at_a_nested_area_the_agent_does_not_write(pol) -> None:
    assert pol.untrusted_writers(f"{R}/agents/raven/obs.md") == ["raven"]
    assert pol.untrusted_writers(f"{R}/agents/raven/locked/plan.md") == []
    assert pol.untrusted_writers(f"{R}/agents/raven/locked/inbox/n.md") == ["raven"]


@pytest.mark.parametrize("uri, forgettable", [
    (f"{R}/agents/raven/obs.md", f"{R}/agents/raven"),
    (f"{R}/agents/raven/locked/plan.md", None),               # the owner's, inside the agent's area
    (f"{R}/agents/raven/locked/inbox/n.md", f"{R}/agents/raven/locked/inbox"),
    (f"{R}/shared/private/salary.md", f"{R}/shared/private"),   # under the owner's remember_to, owner writes
    (f"{R}/shared2/x.md", None),
])
def test_forget_takes_only_where_an_agent_or_a_remember_to_writes(pol, uri: str, forgettable: str | None) -> None:
    assert forget.forgettable_at(pol, uri) == forgettable


def test_the_loader_accepts_nesting_and_refuses_one_folder_twice() -> None:
    nested = {"version": 1, "areas": {"a": f"{R}/a", "b": f"{R}/a/b"},
              "readers": {"x": {"kind": "agent", "account": "h", "user": "x", "areas": {"a": "read"}}}}
    assert policy_mod.parse(yaml.safe_dump(nested)).profile("x").level_at(f"{R}/a/b/c.md") == "read"
    twice = {**nested, "areas": {"a": f"{R}/a", "b": f"{R}/a"}}
    with pytest.raises(ConfigError, match="same URI as 'a'"):
        policy_mod.parse(yaml.safe_dump(twice))


def test_policy_show_says_which_area_decides_each_prefix(pol) -> None:
    rows = {(r.account, r.area): r for r in policy_show.rows(pol)}
    assert rows[("home", "private")].decided_by == "private" and rows[("home", "private")].inside == "shared"
    assert rows[("home", "private")].levels == {"owner": "manage", "raven": None}
    assert rows[("home", "unlisted")].decided_by == "shared"
    assert "shared's ACL decides" in policy_show.describe(rows[("home", "unlisted")])
    assert rows[("lab", "private")].decided_by == "shared" and rows[("lab", "private")].levels == {"guest": "read"}
    assert rows[("home", "open")].levels == {"owner": "manage", "raven": "read"}
    assert rows[("home", "vault")].inside == "open"


def test_policy_show_cli_text_and_json(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "areas": AREAS, "readers": READERS}))
    runner = CliRunner()
    out = runner.invoke(app, ["policy", "show", "--policy", str(path), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert {r["area"] for r in data["areas"] if r["account"] == "home"} == set(AREAS)
    text = runner.invoke(app, ["policy", "show", "--policy", str(path)])
    assert text.exit_code == 0 and "raven none" in text.stdout and "its own ACL" in text.stdout


@pytest.mark.parametrize("uri, allowed", [(f"{R}/shared/private/salary.md", False),
                                          (f"{R}/shared/private/open/handbook.md", True),
                                          (f"{R}/shared/x/../private/salary.md", False)])
def test_guard_check_cli_decides_nested_areas(tmp_path: Path, uri: str, allowed: bool) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "areas": AREAS, "readers": READERS}))
    out = CliRunner().invoke(app, ["guard", "check", "--profile", "raven", "--policy", str(path), "recall_read", uri])
    assert out.exit_code == (0 if allowed else 1), out.output


# ---- every reader's index holds only what its decision lets it read ----

def _setup(tmp_path: Path) -> tuple[config.Settings, policy_mod.Policy]:
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "areas": AREAS, "readers": READERS}))
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "ws"), "guard": {"policy": str(path)},
                                   "openviking": {"account": "home", "user": "owner"}}))
    return config.load(cfg), policy_mod.load(path)


def _fact(word: str) -> str:
    return f"---\nsource: notes\n---\n# {word}\nThe {word} file.\n"


@pytest.mark.parametrize("reader, uri, level", LEVELS[:28], ids=[f"{r}:{u.removeprefix(R)}" for r, u, _ in LEVELS[:28]])
def test_a_synced_file_reaches_a_readers_index_exactly_when_it_may_read_it(tmp_path, reader, uri, level) -> None:
    settings, pol = _setup(tmp_path)
    reader_index.after_write(settings, {uri: _fact("zorblax")}, [], pol, own=False)
    path = reader_index.index_path(settings, pol.profile(reader))
    held = path.exists() and uri in keyword.uris(path)
    assert held is (level is not None)
