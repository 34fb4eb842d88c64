"""Inventory: YAML with lines in errors, access blocks, prerequisites against a real loopback listener,
and `access exec` running setup steps and a command in one shell with secrets injected and masked."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from conftest import free_port, tcp_listener

from muninn.core import config
from muninn.core.errors import ConfigError
from muninn.plugins.access import access_log, prereq, steps
from muninn.plugins.access.inventory import Inventory, UnknownEntry, access_command_line
from muninn.plugins.access.vault import Vault

TOKEN = "jira_Tk_5cX9pQ2wZ7mL1vN8"


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A loopback TCP listener playing the VPN's jump host."""
    with tcp_listener(8) as sock:
        yield sock



def inventory_entries(vpn_port: int, env_script: Path) -> list[dict]:
    return [
        {"id": "vpn", "kind": "vpn", "tcp": f"127.0.0.1:{vpn_port}", "notes": "corporate VPN"},
        {"id": "aws-ops-prod", "kind": "account", "cloud": "aws", "requires": ["vpn"],
         "access": [f"source {env_script}"], "verify": "aws sts get-caller-identity --profile good"},
        {"id": "ops-cluster", "kind": "cluster", "name": "ops-cluster", "aliases": ["ops", "platform cluster"],
         "environment": "prod", "cloud": "aws", "account": "aws-ops-prod", "region": "us-east-2",
         "tags": ["eks", "kubernetes"], "notes": "Platform cluster: ArgoCD and monitoring.",
         "access": [f"source {env_script}", "kubectl config use-context ops-cluster",
                    "kubectl --context ops-cluster get nodes"],
         "verify": "kubectl get nodes", "secrets": ["jira-api-token"]},
        {"id": "laptop-tools", "kind": "service", "access": ["export TOOL_MODE=local",
                                                            "sudo on any VM: muninn secret exec vm-sudo -- ..."]},
    ]


@pytest.fixture
def setup(tmp_path: Path, isolated_keyring: Path, listener: socket.socket) -> tuple[Inventory, Path]:
    script = tmp_path / "set_ops.sh"
    script.write_text("export OPS_PROFILE=ops-prod\n")
    inv_file = tmp_path / "inventory.yaml"
    inv_file.write_text(yaml.safe_dump(inventory_entries(listener.getsockname()[1], script), sort_keys=False))
    secrets = tmp_path / "secrets.yaml"
    secrets.write_text(yaml.safe_dump([{"id": "jira-api-token", "service": "jira", "value": TOKEN}]))
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"vault": {"files": ["secrets.yaml"]}, "inventory": {"files": ["inventory.yaml"]},
                                   "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"}}))
    settings = config.load(cfg)
    Vault.open(settings).sync()
    return Inventory.open(settings, who="tester"), cfg


def test_find_and_show_block(setup) -> None:
    inv, _ = setup
    assert inv.find("platform cluster")[0]["id"] == "ops-cluster"
    assert inv.get("ops").id == "ops-cluster"
    shown = inv.show("ops-cluster")
    block = shown["block"]
    assert block.startswith("Access: ops-cluster (cluster · prod)")
    assert "  account: aws-ops-prod" in block
    assert "  2. kubectl config use-context ops-cluster   (context switch)" in block
    assert "  verify: kubectl get nodes" in block and "last verified: never" in block
    assert shown["requires_all"] == ["vpn"]
    with pytest.raises(UnknownEntry):
        inv.show("nope")


@pytest.mark.parametrize("text, kind", [
    ("source ~/utils/set_aws_ops_prod.sh", "env"),
    (". ./env.sh", "env"),
    ("export AWS_PROFILE=ops", "env"),
    ("AWS_PROFILE=ops", "env"),
    ("kubectl config use-context ops", "switch"),
    ("az account set --subscription 1111", "switch"),
    ("kubectl --context ops get nodes", "command"),
    ("ssh jump01.example.com", "command"),
    ('sudo on any VM: muninn secret exec vm-sudo -- ssh -t <host> sudo -S -k -p "" <command>', "note"),
    ("https://console.example.com", "command"),
])
def test_step_classification(text: str, kind: str) -> None:
    assert steps.classify(text).kind == kind


def test_with_context_replaces_a_dropped_switch() -> None:
    assert steps.with_context("kubectl get nodes", "ops") == "kubectl --context ops get nodes"
    assert steps.with_context("kubectl --context=x get nodes", "ops") == "kubectl --context=x get nodes"
    assert steps.with_context("aws sts get-caller-identity", "ops") == "aws sts get-caller-identity"


def test_prerequisite_up_and_down(listener: socket.socket) -> None:
    up, detail = prereq.tcp_check("127.0.0.1", listener.getsockname()[1])
    assert up and "connected" in detail
    down, detail = prereq.tcp_check("127.0.0.1", free_port())
    assert not down and "refused" in detail.lower()


def test_exec_runs_steps_injects_and_masks(setup) -> None:
    inv, _ = setup
    out, err = io.BytesIO(), io.BytesIO()
    result = inv.exec("ops-cluster", ["sh", "-c", 'echo "$OPS_PROFILE $JIRA_API_TOKEN"; echo "$TOOL_MODE" >&2; '
                                      "exit 3"], stdout=out, stderr=err)
    assert result.exit_code == 3
    assert out.getvalue() == b"ops-prod [REDACTED:jira-api-token]\n"
    lines = access_log.read(inv.settings.paths.access_log)
    assert lines[-1]["action"] == "access-exec" and lines[-1]["exit_code"] == 3 and lines[-1]["who"] == "tester"


def test_exec_failing_step_says_which(setup, tmp_path: Path) -> None:
    inv, _ = setup
    (tmp_path / "set_ops.sh").unlink()
    err = io.BytesIO()
    result = inv.exec("ops-cluster", ["true"], stdout=io.BytesIO(), stderr=err)
    assert result.exit_code != 0 and b"access step 1 failed: source" in err.getvalue()


def test_exec_with_vpn_down_fails_fast_with_one_sentence(setup, listener: socket.socket) -> None:
    inv, _ = setup
    listener.close()
    with pytest.raises(prereq.PrerequisiteDown) as down:
        inv.exec("ops-cluster", ["sh", "-c", "echo should-not-run"], stdout=io.BytesIO(), stderr=io.BytesIO())
    assert str(down.value) == "prerequisite 'vpn' is down: connect the VPN and retry"
    assert down.value.exit_code == 7
    assert access_log.read(inv.settings.paths.access_log)[-1]["exit_code"] == 7


def test_cli_access_exec_and_show(setup, listener: socket.socket) -> None:
    _, cfg = setup
    env = {**os.environ, "MUNINN_CONFIG": str(cfg)}
    cmd = [sys.executable, "-m", "muninn", "access"]
    done = subprocess.run([*cmd, "exec", "ops", "--", "sh", "-c", 'printf %s "$JIRA_API_TOKEN"'],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0 and done.stdout == "[REDACTED:jira-api-token]", done.stderr
    done = subprocess.run([*cmd, "show", "ops-cluster", "--json"], capture_output=True, text=True, env=env)
    assert json.loads(done.stdout)["id"] == "ops-cluster"
    listener.close()
    done = subprocess.run([*cmd, "exec", "ops-cluster", "--", "true"], capture_output=True, text=True, env=env)
    assert done.returncode == 7 and "prerequisite 'vpn' is down: connect the VPN and retry" in done.stderr


def test_access_command_line() -> None:
    assert access_command_line("ops-cluster", ["kubectl", "get", "pods"]) == \
        "muninn access exec ops-cluster -- kubectl get pods"


@pytest.mark.parametrize("entries, problem", [
    ([{"id": "a", "kind": "host", "requires": ["vpn"]}], "requires 'vpn', which is not an inventory entry"),
    ([{"id": "vpn", "kind": "vpn"}, {"id": "a", "kind": "host", "requires": ["vpn"]}], "no `tcp: host:port`"),
    ([{"id": "a", "kind": "host", "account": "acct"}], "account 'acct' is not"),
    ([{"id": "vpn", "kind": "vpn", "tcp": "nohostport"}], "tcp is host:port"),
    ([{"id": "a", "kind": "host"}, {"id": "a", "kind": "host"}], "duplicate id 'a'"),
    ([{"id": "a", "kind": "host", "acess": []}], "unknown key"),
    ([{"id": "a"}], "required key is missing"),
])
def test_bad_inventory_names_file_and_line(tmp_path: Path, entries: list, problem: str) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text(yaml.safe_dump(entries, sort_keys=False))
    from muninn.core.inventory_file import load_files

    with pytest.raises(ConfigError) as err:
        load_files([path])
    assert problem in str(err.value) and err.value.path == str(path) and err.value.line


def test_prerequisite_from_nc_verify(tmp_path: Path, listener: socket.socket) -> None:
    from muninn.core.inventory_file import load_files

    port = listener.getsockname()[1]
    path = tmp_path / "inv.yaml"
    path.write_text(yaml.safe_dump([
        {"id": "office", "kind": "network", "aliases": ["vpn"], "verify": f"nc -z -w 3 127.0.0.1 {port}"},
        {"id": "host", "kind": "host", "requires": ["office"]},
    ]))
    entries = load_files([path])
    assert entries["office"].entry.tcp_target == f"127.0.0.1:{port}"
    prereq.require(entries, "host")
    listener.close()
    with pytest.raises(prereq.PrerequisiteDown, match="^prerequisite 'office' is down: connect the VPN and retry$"):
        prereq.require(entries, "host")


def test_shipped_examples_load() -> None:
    from muninn.core.inventory_file import load_files as load_inventory
    from muninn.core.secrets_file import load_files as load_secrets

    root = Path(__file__).resolve().parent.parent / "examples"
    assert load_inventory([root / "inventory.yaml"]) and load_secrets([root / "secrets.yaml"])


def test_exec_stdin_feeds_a_linked_secret_to_a_prompt_and_masks_it(setup) -> None:
    """`access exec ID --stdin SECRET` (issue 50 §7): a program that reads its password from stdin (`sudo -S`)
    gets the linked secret there; its echo is masked; a secret the entry does not link is refused."""
    import hashlib

    inv, cfg = setup
    check = ('read -r pw; [ "$(printf %s "$pw" | sha256sum | cut -d" " -f1)" = '
             f'"{hashlib.sha256(TOKEN.encode()).hexdigest()}" ] && echo match; echo "$pw"')
    out = io.BytesIO()
    result = inv.exec("ops-cluster", ["sh", "-c", check], stdout=out, stderr=io.BytesIO(),
                      stdin_secret="jira-api-token")
    assert result.exit_code == 0 and out.getvalue() == b"match\n[REDACTED:jira-api-token]\n"
    with pytest.raises(ConfigError, match="not one of ops-cluster's linked secrets"):
        inv.exec("ops-cluster", ["cat"], stdout=io.BytesIO(), stderr=io.BytesIO(), stdin_secret="vm-sudo")
    env = {**os.environ, "MUNINN_CONFIG": str(cfg)}
    done = subprocess.run([sys.executable, "-m", "muninn", "access", "exec", "ops", "--stdin", "jira-api-token",
                           "--", "sh", "-c", check], capture_output=True, text=True, env=env)
    assert done.returncode == 0 and done.stdout == "match\n[REDACTED:jira-api-token]\n", done.stderr
    refused = subprocess.run([sys.executable, "-m", "muninn", "access", "exec", "ops", "--stdin", "nope", "--",
                              "true"], capture_output=True, text=True, env=env)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
