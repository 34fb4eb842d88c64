"""The server leak scan and `muninn leak purge` against the real server: values written straight
into OpenViking (by another reader's key, into an area only that reader can read; a value retired
from the vault; a leak over a file muninn synced) are found by URI, secret id and line, purged,
and the next scan is clean. Never a value in any output."""

from __future__ import annotations

import io
import json
import uuid
from pathlib import Path

import pytest
import yaml

from muninn.core import config, credentials
from muninn.core.client import OpenViking
from muninn.core.errors import AuthError
from muninn.export import sync
from muninn.nightly import purge
from muninn.nightly.backup import crypt as backup_crypt
from muninn.plugins.access.vault import Vault
from muninn.plugins.stack import policy_apply

pytestmark = pytest.mark.integration

LIVE = "Zq8vN3kT5pW2rX7m"
OLD = "Hb4tW9cL2xQ7nR5v"
NEW = "Pd6yM1gS8kV3jT0e"
POLICY = """
version: 1
areas:
  shared: viking://resources/shared
  raven: viking://resources/agents/raven
  diary: viking://resources/agents/diary
readers:
  owner: {{kind: owner, account: {account}, user: owner, areas: {{shared: manage, raven: manage}}, remember_to: shared}}
  sessions: {{kind: assistant, account: {account}, user: sessions, areas: {{shared: write}}, remember_to: shared}}
  raven: {{kind: agent, account: {account}, user: raven, areas: {{shared: read, raven: write, diary: write}},
          remember_to: diary, tools: [recall_search, recall_remember]}}
"""


@pytest.fixture(scope="module")
def world(stack, tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("leaks")
    account = f"lk{uuid.uuid4().hex[:8]}"
    (tmp / "policy.yaml").write_text(POLICY.format(account=account))
    secrets = tmp / "secrets.yaml"
    secrets.write_text(f"- id: nas-admin\n  service: nas\n  value: {LIVE}\n"
                       f"- id: chat-bot\n  service: chat\n  value: {OLD}\n")
    notes = tmp / "notes"
    notes.mkdir()
    (notes / "runbook.md").write_text("# Restart the worker\nUse systemctl restart worker on app01.\n")
    cfg = {**yaml.safe_load(stack.config_path.read_text()), "openviking": {"account": account, "user": "sessions"},
           "home": str(tmp / "home"),
           "guard": {"policy": str(tmp / "policy.yaml")}, "export": {"out": str(tmp / "exports")},
           "vault": {"files": [str(secrets)]},
           "sources": [{"kind": "notes", "path": str(notes), "area": "viking://resources/shared"}]}
    (tmp / "muninn.yaml").write_text(yaml.safe_dump(cfg))
    settings = config.load(tmp / "muninn.yaml")
    # This world has a home of its own, so its keyring scope starts empty: it administers the stack's
    # server with the stack's root key, as an owner with two homes on one server would.
    root = credentials.root_key_name()
    credentials.for_server(settings).set(root, credentials.for_server(stack.settings).require(root, fix="-"))
    from muninn.core import policy

    assert policy_apply.apply(settings, policy.load(tmp / "policy.yaml"), say=lambda m: None).ok
    from muninn.export import pipeline

    pipeline.run_all(settings)
    with OpenViking.user(settings) as client:
        sync.sync_all(client, settings)
    Vault(settings).sync()
    secrets.write_text(f"- id: nas-admin\n  service: nas\n  value: {LIVE}\n"
                       f"- id: chat-bot\n  service: chat\n  value: {NEW}\n")  # OLD is rotated out
    Vault(settings).sync()
    env = {**stack.env, "MUNINN_CONFIG": str(tmp / "muninn.yaml")}
    env.pop("MUNINN_HOME", None)
    return {"settings": settings, "account": account, "env": env}


def _raven(world) -> OpenViking:
    s = world["settings"]
    name = credentials.user_key_name(world["account"], "raven")
    return OpenViking(s.server.base_url, credentials.for_server(s).require(name, fix="-"), key_name=name)


def _cli(stack, world, *args: str):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "muninn", *args], capture_output=True, text=True,
                          env=world["env"], timeout=600)


def _scan(stack, world) -> tuple[int, dict]:
    out = _cli(stack, world, "leak", "scan", "--json")
    assert LIVE not in out.stdout + out.stderr and OLD not in out.stdout + out.stderr
    return out.returncode, json.loads(out.stdout)


def test_the_synced_tree_scans_clean_as_every_reader(stack, world) -> None:
    code, report = _scan(stack, world)
    assert code == 0, report["found"]
    assert report["identities"] == ["cli", "owner", "sessions", "raven"] and report["files"] >= 1


PLANTS = [
    # (who writes, where, text, expected reason, secret id, line)
    ("raven", "viking://resources/agents/diary/2026-11-30.md", f"# Tonight\nthe nas password is {LIVE}\n",
     "known-value", "nas-admin", 2),
    ("raven", "viking://resources/agents/raven/bot.md", f"# Bot\n\n| bot | token |\n| --- | --- |\n| chat | {OLD} |\n",
     "retired-value", "chat-bot", 5),
    ("raven", "viking://resources/agents/raven/deploy.md", "# Deploy\nghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8\n",
     "github-token", None, 2),
]


def test_values_written_straight_into_the_server_are_found_purged_and_the_next_scan_is_clean(stack, world) -> None:
    with _raven(world) as raven:
        for _, uri, text, *_ in PLANTS:
            raven.write(uri, text, wait=True)
    with OpenViking.user(world["settings"]) as cli, pytest.raises(AuthError):
        cli.read(PLANTS[0][1])  # the CLI's own key (an assistant's) cannot see the diary: raven's can

    code, report = _scan(stack, world)
    assert code == 1
    found = {f["uri"]: f for f in report["found"]}
    assert set(found) == {p[1] for p in PLANTS}
    for _, uri, _, reason, secret_id, line in PLANTS:
        assert {"reason": reason, "secret_id": secret_id, "line": line} in found[uri]["findings"], found[uri]
    assert found[PLANTS[0][1]]["seen_as"] == ["raven"]

    nightly = _cli(stack, world, "nightly", "--only", "server-leak-scan", "--json")
    assert nightly.returncode == 1 and "muninn leak purge" in json.loads(nightly.stdout)["found"]["server-leak-scan"]

    dry = _cli(stack, world, "leak", "purge", "--dry-run", "--json")
    assert dry.returncode == 0 and {f["action"] for f in json.loads(dry.stdout)["files"]} == {"would redact"}
    assert _scan(stack, world)[0] == 1, "a dry run changes nothing"

    purged = _cli(stack, world, "leak", "purge", "--json")
    assert purged.returncode == 0, purged.stdout + purged.stderr
    assert {f["uri"]: f["action"] for f in json.loads(purged.stdout)["files"]} == {p[1]: "redacted" for p in PLANTS}
    with _raven(world) as raven:
        diary = raven.read(PLANTS[0][1])
    assert "[REDACTED:nas-admin]" in diary and "# Tonight" in diary and LIVE not in diary
    code, report = _scan(stack, world)
    assert code == 0 and report["found"] == []
    assert _cli(stack, world, "nightly", "--only", "server-leak-scan").returncode == 0


def test_a_leak_over_a_file_muninn_synced_is_removed_and_sync_brings_it_back_clean(stack, world) -> None:
    settings = world["settings"]
    with OpenViking.user(settings) as client:
        (uri,) = [e.uri for e in client.walk("viking://resources/shared")]
        client.write(uri, f"# Restart the worker\nroot password {LIVE}\n", wait=True)
    purged = _cli(stack, world, "leak", "purge", "--json")
    assert purged.returncode == 0, purged.stdout + purged.stderr
    assert [(f["uri"], f["action"]) for f in json.loads(purged.stdout)["files"]] == [(uri, "removed")]
    with OpenViking.user(settings) as client:
        sync.sync_all(client, settings)
        assert "systemctl restart worker" in client.read(uri)
    assert _scan(stack, world) == (0, _scan(stack, world)[1]) and _scan(stack, world)[1]["found"] == []


FACTS = {
    "viking://resources/agents/diary/boiler.md": "# Boiler\nThe boiler pressure valve was replaced on 2 November.\n",
    "viking://resources/agents/diary/backups/nas.md": "# NAS\nThe nas snapshot job moved to 02:30 after the scrub.\n",
    "viking://resources/agents/diary/printer.md": "# Printer\nThe office printer needs the PCL6 driver, not PS.\n",
}


def test_backup_then_delete_the_agents_area_then_restore_finds_its_facts_again(stack, world) -> None:
    import tarfile

    with _raven(world) as raven:
        raven.batch_write("viking://resources/agents/diary", FACTS, wait=True)
    made = _cli(stack, world, "backup", "create", "--json")
    assert made.returncode == 0, made.stderr
    report = json.loads(made.stdout)
    assert report["areas"]["viking://resources/agents/diary"] >= len(FACTS)
    assert {"vault", "policy", "retired-hashes", "sync-manifests"} <= set(report["included"])
    assert any(i.startswith("account list") for i in report["included"]) and report["skipped"] == []
    # Sealed with the backup key: opened the way restore opens it, then every member read.
    sealed = Path(report["path"]).read_bytes()
    assert LIVE.encode() not in sealed and NEW.encode() not in sealed
    with tarfile.open(fileobj=io.BytesIO(backup_crypt.open_bytes(world["settings"], Path(report["path"])))) as tar:
        blob = b"".join(tar.extractfile(m).read() for m in tar.getmembers() if m.isfile())
    assert blob and LIVE.encode() not in blob and OLD.encode() not in blob and NEW.encode() not in blob

    with _raven(world) as raven:
        for uri in FACTS:
            # The server may still be indexing the area it just wrote: wait it out as purge does.
            purge.retry_busy(lambda uri=uri: raven.rm(uri))
        raven.wait()
        left = {e.uri for e in raven.walk("viking://resources/agents/diary")}
    assert not set(FACTS) & left

    restored = _cli(stack, world, "backup", "restore", report["path"], "--to", "viking://resources/agents/diary",
                    "--json")
    assert restored.returncode == 0, restored.stderr
    assert json.loads(restored.stdout)["as"] == "raven"
    with _raven(world) as raven:
        assert {uri: raven.read(uri) for uri in FACTS} == FACTS
    wrong = _cli(stack, world, "backup", "restore", report["path"], "--to", "viking://resources/nowhere")
    assert wrong.returncode == 1 and "viking://resources/agents/diary" in wrong.stderr
    assert "Traceback" not in wrong.stderr
