"""The tool-name lists beside `ToolSpec` are derived from it (one place lists each tool): an agent's default
tools (`agent_default`), the live tools the agents' rules name (`live`) and the local agent of the policy
`muninn init` writes (`init_agent`). These were hand-kept literals; each derivation gives the same tuple,
in the same order."""

from __future__ import annotations

import yaml

from muninn.core import policy
from muninn.plugins.mcp import rules
from muninn.plugins.stack import init_files

AGENT_DEFAULT = ("recall_search", "recall_read", "recall_list", "recall_secret_find", "recall_secret_show",
                 "recall_secret_command", "recall_access_find", "recall_access_show", "recall_status")
LIVE = ("recall_access_exec", "recall_verify")
INIT_AGENT = ("recall_search", "recall_read", "recall_list", "recall_remember", "recall_status")


def test_an_agents_default_tools_come_from_the_tool_specs() -> None:
    assert policy.agent_default_tools() == AGENT_DEFAULT


def test_the_live_tools_come_from_the_tool_specs() -> None:
    assert rules.live_tools() == LIVE
    block = rules.rules_block(list(LIVE))
    assert "(`recall_access_exec`, `recall_verify`, or the service's own status command)" in block


def test_the_init_agents_tools_come_from_the_tool_specs(tmp_path) -> None:
    assert init_files.init_agent_tools() == INIT_AGENT
    planned = {p.path.name: p.text for p in init_files.plan(tmp_path / "muninn.yaml", tmp_path / "notes")}
    agent = yaml.safe_load(planned[init_files.POLICY_NAME])["readers"]["agent"]
    assert tuple(agent["tools"]) == INIT_AGENT
    assert "    tools: [recall_search, recall_read, recall_list, recall_remember, recall_status]\n" in \
        planned[init_files.POLICY_NAME]
