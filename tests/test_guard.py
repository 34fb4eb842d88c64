"""The policy model, tool policy, date check, audit log and `muninn guard check`."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from muninn.cli import app
from muninn.core import policy, registry
from muninn.core.errors import ConfigError
from muninn.guards.dates import check as dates
from muninn.guards.policy import tools as tool_guard
from muninn.plugins.mcp import audit

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "policy.yaml"
FORBIDDEN = sorted(policy.AGENT_FORBIDDEN)

BASE = """\
version: 1
areas:
  shared: viking://resources/shared
  raven: viking://resources/agents/raven
readers:
  raven:
    kind: agent
    account: home
    user: raven
    areas: {shared: read, raven: write}
    remember_to: raven
    tools: [recall_search, recall_read, recall_remember]
"""


@pytest.fixture
def pol() -> policy.Policy:
    return policy.load(EXAMPLE)


def test_example_policy_derives_prefixes_and_tools(pol: policy.Policy) -> None:
    raven = pol.profile("raven")
    assert raven.write_prefixes == ("viking://resources/agents/raven",)
    assert "viking://resources/shared" in raven.read_prefixes
    assert raven.is_agent and not raven.trusted
    assert raven.key_name == "openviking:home:raven"
    assistant = pol.profile("assistant")
    assert "viking://resources/agents/raven" in assistant.read_prefixes
    assert "viking://resources/agents/raven" not in assistant.write_prefixes
    assert pol.untrusted_writers("viking://resources/agents/raven/x.md") == ["raven"]
    assert pol.untrusted_writers("viking://resources/shared/x.md") == []


@pytest.mark.parametrize(("edit", "line", "words"), [
    (("tools: [recall_search, recall_read, recall_remember]", "tools: [recall_search, privacy_resolve]"),
     12, "may never hold 'privacy_resolve'"),
    (("tools: [recall_search, recall_read, recall_remember]", "tools: [recall_search, fly]"), 12, "unknown tool"),
    (("{shared: read, raven: write}", "{shared: read, raven: write, roadmap: read}"), 10, "unknown area"),
    (("raven: viking://resources/agents/raven", "raven: viking://resources/agents/../x"), 4, "must look like"),
    (("raven: viking://resources/agents/raven", "raven: viking://resources/agents/raven/"), 4, "must look like"),
    (("kind: agent", "kind: robot"), 7, "kind"),
    (("remember_to: raven", "remember_to: shared"), 11, "not an area this reader may write"),
    (("    user: raven\n", "    user: raven\n    colour: red\n"), 10, "unknown key"),
])
def test_policy_errors_name_file_and_line(tmp_path: Path, edit: tuple[str, str], line: int, words: str) -> None:
    path = tmp_path / "policy.yaml"
    assert BASE.count(edit[0]) == 1
    path.write_text(BASE.replace(*edit))
    with pytest.raises(ConfigError) as err:
        policy.load(path)
    assert err.value.path == str(path)
    assert err.value.line == line
    assert words in str(err.value)


def test_default_agent_tools_exclude_nothing_forbidden(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(BASE.replace("    tools: [recall_search, recall_read, recall_remember]\n", ""))
    raven = policy.load(path).profile("raven")
    assert not set(raven.tools) & policy.AGENT_FORBIDDEN
    assert set(raven.tools) <= set(registry.tool_access())


def test_unknown_profile_is_a_config_error(pol: policy.Policy) -> None:
    with pytest.raises(ConfigError, match="no reader named 'nobody'"):
        pol.profile("nobody")


@pytest.mark.parametrize("tool", FORBIDDEN)
def test_forbidden_tools_are_denied_to_agents_even_if_listed(pol: policy.Policy, tool: str) -> None:
    raven = pol.profile("raven")
    forged = policy.Profile(**{**raven.__dict__, "tools": (*raven.tools, tool)})
    decision = tool_guard.check_tool(forged, tool)
    assert not decision.allowed and "never available to agent" in decision.reason


@pytest.mark.parametrize(("tool", "allowed"), [
    ("recall_search", True), ("recall_remember", True), ("recall_secret_show", False),
    ("recall_access_exec", False), ("write", False), ("edit", False), ("", False), ("RECALL_SEARCH", False),
])
def test_everything_not_listed_is_denied(pol: policy.Policy, tool: str, allowed: bool) -> None:
    assert tool_guard.check_tool(pol.profile("raven"), tool).allowed is allowed


def test_check_call_uses_write_prefixes_for_writing_tools(pol: policy.Policy) -> None:
    raven = pol.profile("raven")
    assert tool_guard.check_call(raven, "recall_read", "viking://resources/shared/x").allowed
    assert not tool_guard.check_call(raven, "recall_remember", "viking://resources/shared/x").allowed
    ok = tool_guard.check_call(raven, "recall_remember", "viking://resources/agents/raven//a/../b.md")
    assert ok.allowed and ok.canonical_uri == "viking://resources/agents/raven/b.md"


def test_a_crashing_check_is_a_deny(pol: policy.Policy) -> None:
    broken = policy.Profile(**{**pol.profile("raven").__dict__, "tools": None})  # `in None` raises
    decision = tool_guard.check_tool(broken, "recall_search")
    assert not decision.allowed and "guard check failed" in decision.reason
    assert not tool_guard.check_call(broken, "recall_read", "viking://resources/shared/x").allowed


def test_visible_tools_come_from_the_same_check(pol: policy.Policy) -> None:
    raven = pol.profile("raven")
    shown = tool_guard.visible_tools(raven, frozenset(registry.tool_access()))
    assert shown == [t for t in raven.tools if tool_guard.check_tool(raven, t).allowed]
    assert tool_guard.visible_tools(raven, frozenset({"recall_read"})) == ["recall_read"]


NOW = datetime(2026, 10, 18, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(("text", "observed", "plan", "allowed"), [
    ("No bounce arrived after midnight on 2026-10-19.", None, False, False),
    ("Verified: no bounce at 2026-10-19T00:00:00Z", None, False, False),
    ("Checked at 2026-10-18T11:30+00:00", None, False, False),
    ("Checked at 2026-10-18T11:30+02:00", None, False, True),  # 09:30 UTC: already past
    ("Post-fix check done on 19 October 2026", None, False, False),
    ("Post-fix check done on October 19, 2026", None, False, False),
    ("Post-fix check done on Oct 19th 2026", None, False, False),
    ("Deployed today, 2026-10-18.", None, False, True),
    ("Incident INC-10963 on 2025-03-02 was the same.", None, False, True),
    ("Bounce check", NOW + timedelta(hours=14), False, False),
    ("Bounce check", NOW + timedelta(minutes=2), False, True),  # clock skew
    ("Bounce check", NOW - timedelta(days=1), False, True),
    ("Check for bounces after 2026-10-19T00:00Z", None, True, True),
    ("Bounce check", NOW + timedelta(hours=14), True, True),
    ("version 2026-13-45 is not a date", None, False, True),
    # Wording that can only point after now is refused like a date after now...
    ("Verified: no bounces tomorrow morning.", None, False, False),
    ("Tomorrow's reindex checked, all green", None, False, False),
    ("Checked the queue 14 hours from now", None, False, False),
    ("Confirmed: fourteen hours from now the cert is renewed", None, False, False),
    ("Checked the backup the day after tomorrow", None, False, False),
    ("Done: the disk is swapped a  few days from now", None, False, False),
    ("Rollback verified next Monday", None, False, False),
    ("Capacity review done, this coming Friday", None, False, False),
    ("Will have verified it later today", None, False, False),
    ("Rollback verified next Monday", None, True, True),
    # ...the past, durations and ambiguous wording are not.
    ("The restore finished in 3 hours.", None, False, True),
    ("Two hours ago the queue drained; yesterday's deploy failed.", None, False, True),
    ("Cert renewed last Monday, on Monday the alert cleared", None, False, True),
    ("Reindex ran 2 minutes from now, by our clock", None, False, True),   # within the clock skew
    ("Tomorrowland tickets and nextweek.example.com", None, False, True),
])
def test_future_observations_are_refused_unless_plans(text: str, observed: datetime | None, plan: bool,
                                                      allowed: bool) -> None:
    decision = dates.check_observation(text, observed, plan=plan, now=NOW)
    assert decision.allowed is allowed, decision.reason
    if not allowed:
        assert "after now" in decision.reason and "plan" in decision.reason


def test_audit_lines_redact_and_cap_values(tmp_path: Path) -> None:
    secret = "s3cr3t-T0ken-9f8e7d6c5b"
    log = audit.AuditLog(tmp_path / "a" / "audit.jsonl", lambda t: t.replace(secret, "[REDACTED:tok]"))
    log.record(profile="raven", tool="recall_remember", arguments={"text": f"token {secret} " + "x" * 500,
               "tags": [secret], "k": 4}, decision="deny", reason=f"saw {secret}", duration_ms=1.23456)
    log.close()
    raw = (tmp_path / "a" / "audit.jsonl").read_text()
    assert secret not in raw
    (line,) = audit.read(tmp_path / "a" / "audit.jsonl")
    assert set(line) == {"ts", "profile", "tool", "arguments", "decision", "reason", "duration_ms"}
    assert line["arguments"]["k"] == 4 and line["arguments"]["tags"] == ["[REDACTED:tok]"]
    assert "more chars" in line["arguments"]["text"]
    assert os.stat(tmp_path / "a" / "audit.jsonl").st_mode & 0o777 == 0o600


@pytest.mark.parametrize(("args", "code", "word"), [
    (["recall_read", "viking://resources/shared/x.md"], 0, "allow"),
    (["recall_read", "viking://resources/agents/raven/%2e%2e/bob"], 1, "deny"),
    (["recall_remember", "viking://resources/shared/x.md"], 1, "deny"),
    (["privacy_resolve"], 1, "deny"),
    (["set_acl", "viking://resources/agents/raven"], 1, "deny"),
])
def test_guard_check_cli(args: list[str], code: int, word: str) -> None:
    result = CliRunner().invoke(app, ["guard", "check", "--policy", str(EXAMPLE), "--profile", "raven",
                                      *args, "--json"])
    assert result.exit_code == code, result.output
    assert json.loads(result.output)["decision"] == word


def test_guard_check_cli_names_bad_policy_line(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(BASE.replace("kind: agent", "kind: robot"))
    result = CliRunner().invoke(app, ["guard", "check", "--policy", str(path), "--profile", "raven", "recall_read"])
    assert result.exit_code != 0
    assert isinstance(result.exception, ConfigError) and result.exception.line == 7


def test_mcp_config_prints_snippet_and_rules() -> None:
    # The snippet is alone on stdout (tests/test_mcp_config.py covers the class); rules behind --rules.
    result = CliRunner().invoke(app, ["mcp", "config", "--client", "claude", "--profile", "raven",
                                      "--policy", str(EXAMPLE)])
    assert result.exit_code == 0, result.output
    snippet = json.loads(result.stdout)
    args = snippet["mcpServers"]["muninn"]["args"]
    assert args[args.index("mcp"):][:3] == ["mcp", "--profile", "raven"]
    block = CliRunner().invoke(app, ["mcp", "config", "--profile", "raven", "--policy", str(EXAMPLE), "--rules"])
    assert "recall_search" in block.stdout and "kind=\"plan\"" in block.stdout
    codex = CliRunner().invoke(app, ["mcp", "config", "--client", "codex", "--profile", "raven",
                                     "--policy", str(EXAMPLE)])
    assert "[mcp_servers.muninn]" in codex.output


def test_doctor_reports_the_policy(tmp_path: Path, isolated_keyring: Path) -> None:
    from muninn.core import config
    from muninn.plugins.mcp import doctor_check

    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(f"guard: {{policy: {EXAMPLE}, audit_log: {tmp_path / 'a' / 'audit.jsonl'}}}\n")
    checks = {c.name: c for c in doctor_check.guard_policy(config.load(cfg))}
    assert checks["guard policy"].level == "ok" and "3 readers" in checks["guard policy"].detail
    assert checks["guard keys"].level == "warn" and "policy apply" in checks["guard keys"].fix
    assert checks["guard audit log"].level == "ok"
    bad = tmp_path / "policy.yaml"
    bad.write_text(BASE.replace("kind: agent", "kind: robot"))
    cfg.write_text(f"guard: {{policy: {bad}}}\n")
    (check,) = doctor_check.guard_policy(config.load(cfg))
    assert check.level == "fail" and f"{bad}:7" in check.detail


AGENT_WITHOUT_TOOLS = BASE.replace("    tools: [recall_search, recall_read, recall_remember]\n", "")


@pytest.mark.parametrize("policy_text", [
    AGENT_WITHOUT_TOOLS,
    AGENT_WITHOUT_TOOLS.replace("    remember_to: raven\n", ""),   # no remember area needed without recall_remember
])
def test_an_agent_without_tools_gets_read_only_tools(tmp_path: Path, policy_text: str) -> None:
    from muninn.plugins.mcp import registry

    path = tmp_path / "policy.yaml"
    path.write_text(policy_text)
    raven = policy.load(path).profile("raven")
    specs = registry.all_tools()
    assert raven.tools == policy.agent_default_tools()
    for name in ("recall_access_exec", "recall_verify", "recall_remember"):
        assert name not in raven.tools
        assert not tool_guard.check_tool(raven, name).allowed
    # Each default is, by its own annotations, a tool that only reads what muninn holds.
    for name in raven.tools:
        spec = specs[name]
        assert spec.read_only and not spec.destructive and not spec.open_world and not spec.live, name
    # ...and every tool that only reads that way is a default: the list is not short by accident.
    closed = {n for n, s in specs.items() if s.read_only and not s.open_world and not s.live}
    assert set(raven.tools) == closed


@pytest.mark.parametrize("tool", ["recall_access_exec", "recall_verify", "recall_remember"])
def test_tools_with_reach_are_given_to_an_agent_only_by_name(tmp_path: Path, tool: str) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(BASE.replace("tools: [recall_search, recall_read, recall_remember]", f"tools: [{tool}]"))
    raven = policy.load(path).profile("raven")
    assert raven.tools == (tool,) and tool_guard.check_tool(raven, tool).allowed
