"""`muninn forget` refuses before it asks the server: an exported fact (a sync manifest lists it), a
URI outside every area agents or assistants write, a whole area, a folder, something that is not a
viking:// URI, and any call without policy.yaml. Nothing is removed and no key is needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from muninn.cli import app
from muninn.core import config
from muninn.core import policy as policy_mod
from muninn.plugins.mcp import forget

POLICY = {
    "version": 1,
    "areas": {"roadmap": "viking://resources/roadmap", "shared": "viking://resources/shared",
              "raven": "viking://resources/agents/raven", "notes": "viking://resources/notes"},
    "readers": {
        "owner": {"kind": "owner", "account": "home", "user": "owner", "remember_to": "shared",
                  "areas": {"roadmap": "manage", "shared": "manage", "raven": "manage", "notes": "manage"}},
        "assistant": {"kind": "assistant", "account": "home", "user": "assistant", "remember_to": "shared",
                      "areas": {"roadmap": "write", "shared": "write", "raven": "read", "notes": "read"}},
        "raven": {"kind": "agent", "account": "home", "user": "raven", "remember_to": "raven",
                  "areas": {"roadmap": "read", "shared": "read", "raven": "write"},
                  "tools": ["recall_search", "recall_remember"]},
    },
}
EXPORTED = "viking://resources/roadmap/tasks/ops-12.md"


@pytest.fixture
def configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "policy.yaml").write_text(yaml.safe_dump(POLICY))
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"guard": {"policy": str(tmp_path / "policy.yaml")},
                                   "home": str(tmp_path / "home")}))
    monkeypatch.setenv("MUNINN_CONFIG", str(cfg))
    manifests = config.load(cfg).paths.sync_manifests
    manifests.mkdir(parents=True)
    (manifests / "roadmap-abc.json").write_text(json.dumps(
        {"server": "http://x", "identity": "home:owner", "to": "viking://resources/roadmap",
         "files": {"tasks/ops-12.md": "0" * 64}, "pending": {}}))
    return cfg


def _forget(*uris: str) -> tuple[int | None, str]:
    result = CliRunner().invoke(app, ["forget", *uris, "--yes"])
    return getattr(result.exception, "exit_code", None), str(result.exception)


def test_the_forgettable_areas_come_from_policy() -> None:
    policy = policy_mod.parse(yaml.safe_dump(POLICY))
    # Every non-owner reader's write areas and every reader's remember_to; `notes`, which only the
    # owner writes, is not among them.
    assert forget.forgettable_areas(policy) == ("viking://resources/agents/raven", "viking://resources/roadmap",
                                                "viking://resources/shared")


@pytest.mark.parametrize("uri, code, words", [
    (EXPORTED, 8, "exported by muninn"),
    ("viking://resources/roadmap/tasks/../tasks/ops-12.md", 8, "exported by muninn"),
    ("viking://resources/roadmap/tasks/%6Fps-12.md", 8, "exported by muninn"),
    ("viking://resources/notes/runbooks/dns.md", 8, "not in an area agents"),
    ("viking://resources/agents/bob/diary.md", 8, "not in an area agents"),
    ("viking://resources/agents/raven-evil/x.md", 8, "not in an area agents"),
    ("viking://resources/agents/raven", 2, "whole area"),
    ("viking://resources/shared", 2, "whole area"),
    ("viking://resources/agents/raven/observations/", 2, "folder"),
    ("/etc/passwd", 2, "not a viking:// URI"),
    ("viking://resources/agents/raven/\u200bx.md", 2, "not a viking:// URI"),
    ("https://example.com/x.md", 2, "not a viking:// URI"),
])
def test_refused_before_the_server_is_asked(configured: Path, uri: str, code: int, words: str) -> None:
    got, said = _forget(uri)
    assert got == code and words in said, said


def test_one_bad_uri_refuses_them_all(configured: Path) -> None:
    got, said = _forget("viking://resources/agents/raven/ok.md", EXPORTED)
    assert got == 8 and "exported by muninn" in said


def test_without_policy_it_says_how_to_get_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"guard": {"policy": str(tmp_path / "none.yaml")}}))
    monkeypatch.setenv("MUNINN_CONFIG", str(cfg))
    got, said = _forget("viking://resources/agents/raven/x.md")
    assert got == 2 and "policy.yaml" in said


def test_forget_is_never_an_mcp_tool() -> None:
    from muninn.core import registry

    assert not [name for name in registry.tools() if "forget" in name or "delete" in name or name.endswith("_rm")]
    assert "forget" in policy_mod.AGENT_FORBIDDEN


@pytest.mark.parametrize("raw, verdict", [
    ("viking://resources/agents/raven/", "folder"),
    ("viking://resources/agents/raven//", "folder"),
    ("viking://resources/agents/raven/  ", "rejected"),     # a blank segment is no name at all
    ("  viking://resources/agents/raven/a.md", "rejected"),
    ("viking://resources/agents/raven/a.md", "file"),
    ("viking://resources/agents/./raven/a.md", "file"),
])
def test_read_and_forget_share_one_file_uri_rule(raw: str, verdict: str) -> None:
    """`muninn read` and `muninn forget` ask guards.uri.file_uri whether a URI names one file."""
    from muninn.guards.policy import uri as uri_guard

    if verdict == "file":
        assert uri_guard.file_uri(raw) == "viking://resources/agents/raven/a.md"
        return
    with pytest.raises(uri_guard.UriRejected) as got:
        uri_guard.file_uri(raw)
    assert isinstance(got.value, uri_guard.FolderUri) is (verdict == "folder")
    if verdict == "folder":
        assert got.value.canonical == "viking://resources/agents/raven"
