"""The verify sweep against fake kubectl/aws/curl/az/ssh on PATH (tests/fakebin) and a loopback VPN.
Each status must come out right, with a reason; global-state entries must not overlap."""

from __future__ import annotations

import hashlib
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
from muninn.plugins.access import sweep
from muninn.plugins.access.classify import classify
from muninn.plugins.access.inventory import Inventory
from muninn.plugins.access.results import ago
from muninn.plugins.access.vault import Vault

FAKEBIN = Path(__file__).parent / "fakebin"
TOKEN = "jira_Tk_5cX9pQ2wZ7mL1vN8"

# id -> (verify command, expected status, words expected in the reason)
CASES = {
    "k-ok": ("kubectl get nodes", "ok", "node-1"),
    "k-expired": ("kubectl --context expired get nodes", "stale", "Unauthorized"),
    "k-offline": ("kubectl --context offline get nodes", "unreachable", "i/o timeout"),
    "k-nosuch": ("kubectl --context nosuch get nodes", "missing", 'context "nosuch" does not exist'),
    "aws-ok": ("aws sts get-caller-identity --profile good", "ok", ""),
    "aws-expired": ("aws sts get-caller-identity --profile expired", "stale", "ExpiredToken"),
    "aws-offline": ("aws sts get-caller-identity --profile offline", "unreachable", "endpoint URL"),
    "aws-noprofile": ("aws sts get-caller-identity --profile gone", "missing", "could not be found"),
    "curl-ok": ("curl -sf https://ok.example.com/health", "ok", ""),
    "curl-expired": ("curl -sf https://expired.example.com/api", "stale", "401"),
    "curl-offline": ("curl -sf https://offline.example.com/api", "unreachable", "Failed to connect"),
    "curl-nodns": ("curl -sf https://nodns.example.com/api", "unreachable", "Could not resolve"),
    "curl-500": ("curl -sf https://broken.example.com/api", "failed", "error: 500"),
    "ssh-ok": ("ssh ok-host hostname", "ok", "ok-host"),
    "ssh-denied": ("ssh denied-host hostname", "stale", "Permission denied"),
    "ssh-down": ("ssh down-host hostname", "unreachable", "timed out"),
    "no-binary": ("gh auth status", "missing", "gh is not installed"),
    "writes": ("kubectl delete pod web-1", "skipped", "guard refused"),
    "chained": ("kubectl get pods; rm -rf /", "skipped", "guard refused"),
    "hangs": ("kubectl --context hang get nodes", "unreachable", "no answer within"),
    "behind-vpn": ("kubectl --context good get nodes", "ok", ""),
    "behind-dead-vpn": ("kubectl --context good get nodes", "skipped",
                        "prerequisite 'vpn-down' is down: connect the VPN and retry"),
    "az-ok1": ("az account show --subscription sub-ok1", "ok", ""),
    "az-ok2": ("az account show --subscription sub-ok2", "ok", ""),
    "az-expired": ("az account show --subscription sub-expired", "stale", "AADSTS700082"),
    "az-gone": ("az account show --subscription sub-gone", "missing", "not found"),
}


@pytest.fixture(scope="module")
def listener() -> Iterator[socket.socket]:
    with tcp_listener(64) as sock:
        yield sock



def entries(vpn_port: int) -> list[dict]:
    out: list[dict] = [
        {"id": "vpn", "kind": "vpn", "tcp": f"127.0.0.1:{vpn_port}"},
        {"id": "vpn-down", "kind": "vpn", "tcp": f"127.0.0.1:{free_port()}"},
    ]
    for entry_id, (command, _, _) in CASES.items():
        entry: dict = {"id": entry_id, "kind": "cluster", "verify": command}
        if entry_id == "k-ok":
            entry["access"] = ["kubectl config use-context good", "kubectl --context good get nodes"]
        if entry_id == "behind-vpn":
            entry["requires"] = ["vpn"]
        if entry_id == "behind-dead-vpn":
            entry["requires"] = ["vpn-down"]
        if entry_id.startswith("az-"):
            sub = command.split()[-1]
            entry["access"] = [f"az account set --subscription {sub}"]
        out.append(entry)
    return out


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("verify")


@pytest.fixture
def env(home: Path, tmp_path: Path) -> dict[str, str]:
    # Real kubectl/aws/az may exist on this machine: the fakes come first.
    return {**os.environ, "PATH": f"{FAKEBIN}:/usr/bin:/bin", "FAKE_LOG": str(tmp_path / "calls.log"),
            "EXPECT_TOKEN_SHA256": hashlib.sha256(TOKEN.encode()).hexdigest()}


@pytest.fixture(scope="module")
def settings(home: Path, listener: socket.socket):
    """One inventory for the module; the workspace and the vault key are pinned so every test sees them."""
    (home / "inventory.yaml").write_text(yaml.safe_dump(entries(listener.getsockname()[1]), sort_keys=False))
    (home / "secrets.yaml").write_text(yaml.safe_dump([
        {"id": "jira-api-token", "service": "jira", "value": TOKEN, "requires": ["vpn"],
         "check": 'curl -sf -H "Authorization: Bearer $JIRA_API_TOKEN" https://token.example.com/me'},
        {"id": "no-check", "value": "another-Value-123abc"},
    ]))
    cfg = home / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(home / "ws"), "vault": {"files": ["secrets.yaml"],
                                                                      "key_name": f"vault:key:{home.name}"},
                                   "inventory": {"files": ["inventory.yaml"]},
                                   "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"},
                                   "verify": {"parallel": 4, "timeout": 2}}))
    s = config.load(cfg)
    Vault.open(s).sync()
    return s


@pytest.fixture(scope="module")
def swept(settings, home: Path):
    env = {**os.environ, "PATH": f"{FAKEBIN}:/usr/bin:/bin",
           "EXPECT_TOKEN_SHA256": hashlib.sha256(TOKEN.encode()).hexdigest()}
    return {(r.kind, r.id): r for r in sweep.run(settings, sweep.plan(settings), env=env)}


@pytest.mark.parametrize("entry_id", list(CASES))
def test_status_and_reason(swept, entry_id: str) -> None:
    _, status, words = CASES[entry_id]
    result = swept[("inventory", entry_id)]
    assert result.status == status, result.reason
    assert words in result.reason and result.reason


def test_prerequisites_checked_once_and_reported(swept) -> None:
    assert swept[("prerequisite", "vpn")].status == "ok"
    down = swept[("prerequisite", "vpn-down")]
    assert down.status == "unreachable" and "refused" in down.reason.lower()


def test_secret_check_injects_and_masks(swept) -> None:
    result = swept[("secret", "jira-api-token")]
    assert result.status == "ok"
    assert TOKEN not in result.reason and "[REDACTED:jira-api-token]" in result.reason
    assert ("secret", "no-check") not in swept


def test_context_switch_dropped_for_flag(settings, env) -> None:
    item = next(i for i in sweep.plan(settings) if i.id == "k-ok")
    assert item.command == "kubectl --context good get nodes"
    assert item.dropped == ["kubectl config use-context good"] and "use-context" not in item.script


def test_global_state_entries_run_one_at_a_time(settings, env, monkeypatch: pytest.MonkeyPatch) -> None:
    # The fakes log their calls to a file: the read-only sandbox rightly stops that (tests/test_sandbox.py).
    monkeypatch.setattr(settings.verify, "sandbox", "off")
    items = sweep.plan(settings)
    assert {i.id for i in items if i.serial} == {"az-ok1", "az-ok2", "az-expired", "az-gone"}
    sweep.run(settings, items, env=env)
    az = [line.split()[0] for line in Path(env["FAKE_LOG"]).read_text().splitlines() if " az " in line]
    # `az account set` (+ `az account show` when the set worked) per entry: strictly alternating, so no overlap.
    assert len(az) >= 8 and az == ["start", "end"] * (len(az) // 2)


def test_results_are_stored_for_show(swept, settings) -> None:
    inv = Inventory.open(settings)
    assert inv.show("k-ok")["last_verified"].startswith("last verified: ok ")
    assert inv.show("k-expired")["last_verified"].startswith("last verified: stale ")
    assert Vault.open(settings).show("jira-api-token")["last_verified"].startswith("last verified: ok ")


def test_only_named_ids_and_their_prerequisites(settings, env) -> None:
    items = sweep.plan(settings, ["behind-vpn"])
    assert [(i.kind, i.id) for i in items] == [("prerequisite", "vpn"), ("inventory", "behind-vpn")]


def test_dry_run_runs_nothing(settings, env, tmp_path: Path) -> None:
    env = {**env, "MUNINN_CONFIG": str(settings.source_file)}
    done = subprocess.run([sys.executable, "-m", "muninn", "verify", "--dry-run", "--json"], capture_output=True,
                          text=True, env=env)
    assert done.returncode == 0, done.stderr
    plan = {i["id"]: i for i in json.loads(done.stdout)}
    assert plan["writes"]["allowed"] is False and "kubectl delete" in plan["writes"]["verdict"]
    assert plan["k-ok"]["allowed"] is True and plan["az-ok1"]["serial"] is True
    assert not Path(env["FAKE_LOG"]).exists()


def test_cli_sweep_json_and_exit_code(settings, env) -> None:
    env = {**env, "MUNINN_CONFIG": str(settings.source_file)}
    done = subprocess.run([sys.executable, "-m", "muninn", "verify", "--json", "k-ok", "behind-vpn"],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert {r["id"]: r["status"] for r in json.loads(done.stdout)} == {"vpn": "ok", "k-ok": "ok", "behind-vpn": "ok"}
    done = subprocess.run([sys.executable, "-m", "muninn", "verify", "--json", "k-expired"],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 1 and json.loads(done.stdout)[0]["status"] == "stale"


@pytest.mark.parametrize("code, output, status", [
    (0, "fine", "ok"),
    (127, "bash: kubectl: command not found", "missing"),
    (1, "error: You must be logged in to the server (Unauthorized)", "stale"),
    (1, "Unable to connect to the server: dial tcp: lookup x: no such host", "unreachable"),
    (255, "The SSO session associated with this profile has expired", "stale"),
    (1, "Unable to locate credentials. You can configure credentials by running \"aws configure\".", "stale"),
    (1, "sudo: a password is required", "stale"),
    (1, "something odd happened", "failed"),
    (1, "bash: /home/me/utils/set_env.sh: No such file or directory", "missing"),
])
def test_classify_table(code: int, output: str, status: str) -> None:
    assert classify(code, output)[0] == status


@pytest.mark.parametrize("printed, status", [("200", "ok"), ("302", "ok"), ("401", "stale"), ("403", "stale"),
                                             ("404", "missing"), ("503", "failed")])
def test_curl_http_code_without_fail_flag(printed: str, status: str) -> None:
    command = "curl -s -o /dev/null -w '%{http_code}' https://grafana.example.com/api/health"
    assert classify(0, printed, command=command)[0] == status
    assert classify(0, printed, command="kubectl get nodes")[0] == "ok"


def test_ago() -> None:
    from datetime import UTC, datetime, timedelta

    now = datetime(2026, 1, 1, 12, tzinfo=UTC)
    assert ago((now - timedelta(hours=2, minutes=5)).isoformat(), now) == "2h ago"
    assert ago((now - timedelta(seconds=30)).isoformat(), now) == "30s ago"
    assert ago((now - timedelta(days=3)).isoformat(), now) == "3d ago"


@pytest.mark.parametrize("cfg", [{}, {"inventory": {"files": []}},
                                 {"inventory": {"files": ["inv.yaml"]}, "_inv": [{"id": "box", "kind": "host"}]}])
def test_nothing_to_verify_says_what_would_give_it_something(run_muninn, tmp_path: Path, cfg: dict) -> None:
    """Not `0 checked in 0.0 s: `: the summary names where checks come from."""
    if "_inv" in cfg:
        (tmp_path / "inv.yaml").write_text(yaml.safe_dump(cfg.pop("_inv")))
    (tmp_path / "muninn.yaml").write_text(yaml.safe_dump({"home": str(tmp_path / "home"), **cfg}))
    ended = run_muninn(["--config", str(tmp_path / "muninn.yaml"), "verify"])
    assert ended.exit_code == 0, ended.stderr
    assert "nothing to check" in ended.stderr and "inventory.files" in ended.stderr, ended.stderr
    assert "0 checked" not in ended.stderr
