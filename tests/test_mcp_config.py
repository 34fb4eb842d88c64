"""`muninn mcp config`: a snippet that works as printed. JSON (or TOML) alone on stdout with an absolute
command, a profile the policy has, the env the server needs; the rules block behind --rules names only
the profile's own tools."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from muninn.cli import app
from muninn.core import policy as policy_mod
from muninn.core.errors import ConfigError
from muninn.plugins.mcp import rules

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "policy.yaml"
PROFILES = sorted(policy_mod.load(EXAMPLE).profiles)
SEED_RULES = ["Memory is history", "VPN is down is not a bad token", "Never read kubeconfig, ssh config, env scripts"]


def _run(*args: str):
    return CliRunner().invoke(app, ["mcp", "config", "--policy", str(EXAMPLE), *args])


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("client", ["claude", "generic"])
def test_json_alone_on_stdout_with_an_absolute_command_and_the_env(client: str, profile: str) -> None:
    result = _run("--client", client, "--profile", profile)
    assert result.exit_code == 0, result.output
    server = json.loads(result.stdout)["mcpServers"]["muninn"]
    assert Path(server["command"]).is_absolute() and Path(server["command"]).exists()
    args = server["args"]
    assert args[args.index("mcp"):][:3] == ["mcp", "--profile", profile]
    assert Path(args[args.index("--policy") + 1]).is_absolute()
    folders = {"MUNINN_CONFIG", "MUNINN_HOME", "MUNINN_MODELS", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "HOME"}
    assert all(Path(v).is_absolute() for k, v in server["env"].items() if k in folders)
    assert server["env"]["PYTHON_KEYRING_BACKEND"]   # the session's, chosen by environment variable


@pytest.mark.parametrize("profile", PROFILES)
def test_codex_gets_valid_toml(profile: str) -> None:
    result = _run("--client", "codex", "--profile", profile)
    assert result.exit_code == 0, result.output
    server = tomllib.loads(result.stdout)["mcp_servers"]["muninn"]
    assert Path(server["command"]).is_absolute() and "--profile" in server["args"]


def test_claude_add_line_goes_to_stderr_only() -> None:
    result = _run("--client", "claude", "--profile", "raven")
    assert "claude mcp add muninn" in result.stderr and "claude mcp add" not in result.stdout


@pytest.mark.parametrize("profile", ["agent", "nobody", "Raven", "raven ", ""])
def test_a_profile_the_policy_lacks_exits_2_naming_the_ones_it_has(profile: str) -> None:
    result = _run("--client", "claude", "--profile", profile)
    assert isinstance(result.exception, ConfigError) and result.exception.exit_code == 2, result.output
    assert not result.stdout.strip()
    assert all(name in str(result.exception) for name in PROFILES), result.exception


def test_the_refusal_is_one_sentence_and_exit_2_from_the_real_cli() -> None:
    proc = subprocess.run([sys.executable, "-m", "muninn", "mcp", "config", "--client", "claude",
                           "--policy", str(EXAMPLE), "--profile", "agent"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and not proc.stdout
    assert "no reader named 'agent'" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("agents, code", [(["raven"], 0), (["raven", "wren"], 2), ([], 2)])
def test_without_profile_the_only_agent_is_taken_else_exit_2(tmp_path: Path, agents: list[str], code: int) -> None:
    doc = {"version": 1, "areas": {"shared": "viking://resources/shared"},
           "readers": {"owner": {"kind": "owner", "account": "home", "user": "owner", "areas": {"shared": "manage"},
                                 "remember_to": "shared"},
                       **{a: {"kind": "agent", "account": "home", "user": a, "areas": {"shared": "read"}}
                          for a in agents}}}
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(doc))
    result = CliRunner().invoke(app, ["mcp", "config", "--client", "claude", "--policy", str(path)])
    if code == 0:
        assert result.exit_code == 0, result.output
        args = json.loads(result.stdout)["mcpServers"]["muninn"]["args"]
        assert args[args.index("--profile") + 1] == "raven"
    else:
        assert isinstance(result.exception, ConfigError) and result.exception.exit_code == code
        assert "--profile" in str(result.exception) and "owner" in str(result.exception)


TOOL_SETS = [
    ("recall_search",),
    ("recall_search", "recall_read"),
    ("recall_read", "recall_remember"),
    ("recall_search", "recall_read", "recall_access_find", "recall_access_show", "recall_access_exec"),
    ("recall_verify", "recall_status"),
    ("recall_secret_find", "recall_secret_show"),   # without recall_secret_command: no vault recipe
    (),
]


@pytest.mark.parametrize("tools", TOOL_SETS, ids=lambda t: "+".join(t) or "none")
def test_rules_never_name_a_tool_the_profile_lacks_and_keep_the_seed_rules(tools: tuple[str, ...]) -> None:
    block = rules.rules_block(tools)
    assert set(re.findall(r"recall_\w+", block)) <= set(tools), block
    assert all(rule in block for rule in SEED_RULES), block


@pytest.mark.parametrize("profile", PROFILES)
def test_rules_flag_prints_the_profiles_block_alone(profile: str) -> None:
    result = _run("--profile", profile, "--rules")
    assert result.exit_code == 0, result.output
    prof = policy_mod.load(EXAMPLE).profile(profile)
    assert result.stdout.startswith("## muninn") and "{" not in result.stdout
    assert set(re.findall(r"recall_\w+", result.stdout)) <= set(prof.tools)
    assert rules.instructions(prof).startswith(result.stdout)
