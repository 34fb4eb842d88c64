"""`muninn mcp install --client claude`: muninn's entry goes into Claude Code's own file and comes out
again, and everything else the file holds stays exactly as it was; a file that is not a JSON object is
named and left untouched. Also: what `init` and `mcp config` carry for a server started elsewhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FILE_KEYRING

from muninn.plugins.mcp import rules

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_POLICY = ROOT / "examples" / "policy.yaml"

# What a person's ~/.claude.json may already hold (shapes seen in Claude Code's docs).
EXISTING = [
    None,                                                        # no file yet
    "",                                                          # an empty file
    {},
    {"theme": "dark", "numStartups": 12},
    {"mcpServers": {"github": {"type": "stdio", "command": "npx", "args": ["-y", "gh"], "env": {"T": "x"}}}},
    {"mcpServers": {}, "projects": {"/src/a": {"mcpServers": {"muninn": {"command": "old"}}, "allowedTools": []}}},
    {"mcpServers": {"muninn": {"command": "/old/muninn", "args": []}, "other": {"command": "o"}}, "ünï": "cödé"},
]
BROKEN = ["{", "[]", '"text"', "12", '{"mcpServers": [1]}', "{'single': 'quotes'}"]


def _muninn(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "muninn", *args], capture_output=True, text=True, env=env,
                          cwd=cwd or home, timeout=120)


def _init(home: Path) -> None:
    (home / "notes").mkdir(parents=True, exist_ok=True)
    done = _muninn(home, "init", "--notes", str(home / "notes"), "--yes")
    assert done.returncode == 0, done.stderr


def _write(path: Path, content: object) -> None:
    if content is None:
        return
    path.write_text(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False))


def _before(content: object) -> dict:
    return {} if content in (None, "") else json.loads(json.dumps(content))


@pytest.mark.parametrize("existing", EXISTING)
def test_install_merges_and_uninstall_leaves_the_rest_as_it_was(tmp_path: Path, existing: object) -> None:
    home = tmp_path / "h"
    _init(home)
    target = home / ".claude.json"
    _write(target, existing)
    done = _muninn(home, "mcp", "install", "--client", "claude")
    assert done.returncode == 0, done.stderr
    assert str(target) in done.stdout
    after = json.loads(target.read_text())
    entry = after["mcpServers"]["muninn"]
    assert Path(entry["command"]).is_absolute() and entry["args"][-3:] == ["mcp", "--profile", "assistant"]
    assert entry["env"]["PYTHON_KEYRING_BACKEND"] == FILE_KEYRING
    before = _before(existing)
    rest = {k: v for k, v in after.items() if k != "mcpServers"}
    assert rest == {k: v for k, v in before.items() if k != "mcpServers"}
    others = {k: v for k, v in before.get("mcpServers", {}).items() if k != "muninn"}
    assert {k: v for k, v in after["mcpServers"].items() if k != "muninn"} == others

    again = _muninn(home, "mcp", "install", "--client", "claude")
    assert again.returncode == 0 and "unchanged" in again.stdout

    gone = _muninn(home, "mcp", "install", "--client", "claude", "--uninstall")
    assert gone.returncode == 0, gone.stderr
    final = json.loads(target.read_text())
    assert "muninn" not in final.get("mcpServers", {})
    assert {k: v for k, v in final.items() if k != "mcpServers"} == rest
    assert final.get("mcpServers", {}) == others


def test_project_scope_writes_the_projects_mcp_json_only(tmp_path: Path) -> None:
    home = tmp_path / "h"
    _init(home)
    project = tmp_path / "repo"
    project.mkdir()
    done = _muninn(home, "mcp", "install", "--client", "claude", "--scope", "project", "--project", str(project))
    assert done.returncode == 0, done.stderr
    assert "muninn" in json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert not (home / ".claude.json").exists()
    gone = _muninn(home, "mcp", "install", "--client", "claude", "--scope", "project", "--project", str(project),
                   "--uninstall")
    assert gone.returncode == 0 and json.loads((project / ".mcp.json").read_text()) == {"mcpServers": {}}


@pytest.mark.parametrize("broken", BROKEN)
@pytest.mark.parametrize("uninstall", [False, True])
def test_a_file_that_is_not_a_json_object_is_named_and_untouched(tmp_path: Path, broken: str, uninstall: bool) -> None:
    home = tmp_path / "h"
    _init(home)
    target = home / ".claude.json"
    target.write_text(broken)
    done = _muninn(home, "mcp", "install", "--client", "claude", *(["--uninstall"] if uninstall else []))
    assert done.returncode == 2, done.stderr
    assert str(target) in done.stderr and "Traceback" not in done.stderr
    assert target.read_text() == broken


def test_the_owner_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "h"
    _init(home)
    done = _muninn(home, "mcp", "install", "--client", "claude", "--profile", "owner")
    assert done.returncode == 2 and "is an owner" in done.stderr
    assert not (home / ".claude.json").exists()


@pytest.mark.parametrize("backend", [FILE_KEYRING, "keyring.backends.SecretService.Keyring"])
def test_init_writes_down_a_backend_chosen_by_environment_variable(tmp_path: Path, backend: str) -> None:
    home = tmp_path / "h"
    (home / "notes").mkdir(parents=True)
    env = {**os.environ, "HOME": str(home), "PYTHON_KEYRING_BACKEND": backend}
    done = subprocess.run([sys.executable, "-m", "muninn", "init", "--notes", str(home / "notes"), "--yes"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    from muninn.core import config

    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "muninn" / "muninn.yaml"
    assert config.load(cfg, environ={}).keyring.backend == backend


def test_init_without_the_variable_leaves_the_backend_to_the_os(tmp_path: Path) -> None:
    home = tmp_path / "h"
    (home / "notes").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHON_KEYRING_BACKEND"}
    done = subprocess.run([sys.executable, "-m", "muninn", "init", "--notes", str(home / "notes"), "--yes"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    from muninn.core import config

    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "muninn" / "muninn.yaml"
    assert config.load(cfg, environ={}).keyring.backend is None
    assert "# keyring:" in cfg.read_text()


@pytest.mark.parametrize("environ, wanted, unwanted", [
    ({"PYTHON_KEYRING_BACKEND": FILE_KEYRING}, {"PYTHON_KEYRING_BACKEND": FILE_KEYRING}, []),
    ({"MUNINN_SERVER__PORT": "2933", "MUNINN_SEARCH__TIMEOUT": "9"},
     {"MUNINN_SERVER__PORT": "2933", "MUNINN_SEARCH__TIMEOUT": "9"}, []),
    ({"MUNINN_OV_ROOT_KEY": "s3cr3t-root", "MUNINN_SERVER_VENV": "/v"}, {}, ["MUNINN_OV_ROOT_KEY"]),
    ({"MUNINN_HOME": "/w/home", "XDG_DATA_HOME": "/x/data"},
     {"MUNINN_HOME": "/w/home", "XDG_DATA_HOME": "/x/data"}, []),
    ({"HOME": "/somewhere/else"}, {"HOME": "/somewhere/else"}, []),
    ({"OPENAI_API_KEY": "sk-x", "AWS_SECRET_ACCESS_KEY": "y"}, {}, ["OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY"]),
])
def test_server_env_carries_every_setting_and_no_credential(environ: dict, wanted: dict, unwanted: list) -> None:
    env = rules.server_env(None, None, environ)
    assert wanted.items() <= env.items(), env
    assert not set(unwanted) & set(env), env


def test_the_yaml_backend_wins_over_the_variable() -> None:
    env = rules.server_env(None, "a.b.C", {"PYTHON_KEYRING_BACKEND": FILE_KEYRING})
    assert env["PYTHON_KEYRING_BACKEND"] == "a.b.C"


# What a person's ~/.claude/settings.json may already hold: their own hooks on the same events.
SETTINGS = [
    None,
    {"permissions": {"allow": ["Bash(npm test:*)"]}, "model": "opus"},
    {"hooks": {"PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "prettier -w"}]}]}},
    {"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "log.sh"},
                                                          {"type": "command", "command": "/old/bin/muninn observe"}]}],
               "SessionEnd": [{"hooks": [{"type": "command", "command": "python -m muninn observe"}]}],
               "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}},
]


def _without_muninn(settings: dict) -> dict:
    """The settings with every muninn hook taken out by hand (what uninstall must leave)."""
    from muninn.plugins.mcp import client_install

    out = json.loads(json.dumps(settings))
    for event, groups in list(out.get("hooks", {}).items()):
        for g in list(groups):
            g["hooks"] = [h for h in g["hooks"] if not client_install.is_ours(h)]
            if not g["hooks"]:
                groups.remove(g)
        if not groups:
            del out["hooks"][event]
    if "hooks" in out and not out["hooks"]:
        del out["hooks"]
    return out


@pytest.mark.parametrize("existing", SETTINGS)
def test_hooks_and_the_recall_command_come_and_go_leaving_the_rest(tmp_path: Path, existing: object) -> None:
    home = tmp_path / "h"
    _init(home)
    target = home / ".claude" / "settings.json"
    target.parent.mkdir(parents=True)
    _write(target, existing)
    assert _muninn(home, "mcp", "install", "--client", "claude", "--record").returncode == 0
    after = json.loads(target.read_text())
    from muninn.plugins.mcp import client_install

    for event in ("PostToolUse", "SessionEnd"):
        mine = [h for g in after["hooks"][event] for h in g["hooks"] if client_install.is_ours(h)]
        assert len(mine) == 1 and mine[0]["command"].split()[0] == "env", mine   # one, the new one
    assert _without_muninn(after) == _without_muninn(_before(existing))
    recall = home / ".claude" / "commands" / "recall.md"
    assert "recall_search" in recall.read_text() and "'assistant'" in recall.read_text()

    assert _muninn(home, "mcp", "install", "--client", "claude", "--uninstall").returncode == 0
    assert json.loads(target.read_text()) == _without_muninn(_before(existing))
    assert not recall.exists()


def test_a_recall_command_of_the_persons_own_is_left_alone(tmp_path: Path) -> None:
    home = tmp_path / "h"
    _init(home)
    recall = home / ".claude" / "commands" / "recall.md"
    recall.parent.mkdir(parents=True)
    recall.write_text("my own /recall\n")
    done = _muninn(home, "mcp", "install", "--client", "claude")
    assert done.returncode == 0 and "left alone" in done.stdout
    gone = _muninn(home, "mcp", "install", "--client", "claude", "--uninstall")
    assert gone.returncode == 0 and recall.read_text() == "my own /recall\n"


def test_a_broken_settings_file_stops_the_install_before_any_file_changes(tmp_path: Path) -> None:
    home = tmp_path / "h"
    _init(home)
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text('{"hooks": [')
    done = _muninn(home, "mcp", "install", "--client", "claude")
    assert done.returncode == 2 and "settings.json" in done.stderr
    assert not (home / ".claude.json").exists() and not (home / ".claude" / "commands").exists()
