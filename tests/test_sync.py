"""Sync against the real OpenViking server: idempotence, kills, ownership, prune, no leaks back."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from muninn.core import config, credentials
from muninn.core.client import OpenViking
from muninn.core.errors import ConfigError
from muninn.export import pipeline
from muninn.export.sync import Manifest, check_area, remote_files, sync

pytestmark = pytest.mark.integration
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
FILE_KEYRING = "keyrings.alt.file.PlaintextKeyring"


@pytest.fixture(scope="module")
def account(stack) -> tuple[str, str, OpenViking]:
    """A fresh account for this module: (account id, admin key, client)."""
    import uuid

    name = f"sync{uuid.uuid4().hex[:8]}"
    key = stack.root.create_account(name, "owner")
    client = OpenViking(stack.settings.server.base_url, key, key_name=f"{name}:owner")
    yield name, key, client
    client.close()


@pytest.fixture(scope="module")
def notes_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("notes-out")
    pipeline.run("notes", EXAMPLES / "notes", out, [EXAMPLES / "secrets.yaml"])
    return out


def copy_tree(src: Path, dst: Path) -> Path:
    for p in src.rglob("*.md"):
        target = dst / p.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(p.read_bytes())
    return dst


def local_set(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*.md") if ".muninn-export" not in p.parts}


def test_area_must_be_under_resources() -> None:
    for bad in ("viking://resources", "viking://agent/skills/x", "viking://resources/a/../b", "/tmp/x"):
        with pytest.raises(ConfigError):
            check_area(bad)


def test_sync_is_idempotent_replaces_changes_and_is_searchable(account, notes_out: Path, tmp_path: Path) -> None:
    _, _, client = account
    area = "viking://resources/idem"
    src = copy_tree(notes_out, tmp_path / "src")
    n = len(local_set(src))
    first = sync(client, src, area, batch_size=7, manifest_dir=tmp_path / "m")
    assert (first.written, first.unchanged, first.removed, first.missing_after_wait) == (n, 0, 0, 0)
    assert remote_files(client, area) == local_set(src)
    again = sync(client, src, area, manifest_dir=tmp_path / "m")
    assert (again.written, again.unchanged, again.missing_after_wait) == (0, n, 0)
    rollback = src / "runbooks/database-upgrade-2025/rollback.md"
    rollback.write_text(rollback.read_text().replace("12 minutes", "14 minutes"))
    changed = sync(client, src, area, manifest_dir=tmp_path / "m")
    assert (changed.written, changed.unchanged) == (1, n - 1)
    assert "14 minutes" in client.read(f"{area}/runbooks/database-upgrade-2025/rollback.md")
    hits = client.find("how do I roll back the Postgres upgrade", target_uri=area, limit=5)
    assert any("database-upgrade-2025" in h["uri"] for h in hits)


def test_never_touches_files_muninn_did_not_write_and_prunes_its_own(account, notes_out: Path,
                                                                    tmp_path: Path) -> None:
    _, _, client = account
    area = "viking://resources/owned"
    src = copy_tree(notes_out, tmp_path / "src")
    client.ensure_dir(area)
    foreign = {f"{area}/agents-wrote/this.md": "# Agent note\n\nWritten by the agent, not by muninn.\n",
               f"{area}/notes/log-viewer.md": "# Someone else's version of this path\n"}
    client.batch_write(area, foreign, wait=True)
    report = sync(client, src, area, manifest_dir=tmp_path / "m")
    assert report.conflicts == ["notes/log-viewer.md"]
    assert report.written == len(local_set(src)) - 1
    for uri, text in foreign.items():
        assert client.read(uri) == text
    # A vanished fact stays without --prune, and goes with it; the foreign files stay either way.
    (src / "incidents/2025-05-14-dns-outage.md").unlink()
    (src / "notes/log-viewer.md").unlink()
    kept = sync(client, src, area, manifest_dir=tmp_path / "m")
    assert kept.removed == 0 and "incidents/2025-05-14-dns-outage.md" in remote_files(client, area)
    pruned = sync(client, src, area, prune=True, manifest_dir=tmp_path / "m")
    assert (pruned.removed, pruned.missing_after_wait, pruned.conflicts) == (1, 0, [])
    remote = remote_files(client, area)
    assert "incidents/2025-05-14-dns-outage.md" not in remote
    assert {"agents-wrote/this.md", "notes/log-viewer.md"} <= remote
    for uri, text in foreign.items():
        assert client.read(uri) == text
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="refusing to prune"):
        sync(client, tmp_path / "empty", area, prune=True, manifest_dir=tmp_path / "m")
    assert "runbooks/restic-restore.md" in remote_files(client, area)


def test_lost_manifest_adopts_identical_files_and_rewrites_nothing(account, notes_out: Path, tmp_path: Path) -> None:
    _, _, client = account
    area = "viking://resources/adopt"
    sync(client, notes_out, area, manifest_dir=tmp_path / "m1")
    fresh = sync(client, notes_out, area, manifest_dir=tmp_path / "m2")
    assert (fresh.written, fresh.conflicts, fresh.unchanged) == (0, [], len(local_set(notes_out)))


KILLER = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from muninn.core.client import OpenViking
    from muninn.export.sync import sync
    url, key, src, area, mdir = sys.argv[1:6]
    def die(done, total):
        os.kill(os.getpid(), signal.SIGKILL)   # no cleanup, no finally: a real kill after batch 1
    sync(OpenViking(url, key, key_name="killed"), Path(src), area, batch_size=5,
         manifest_dir=Path(mdir), on_progress=die)
""")


def test_killed_mid_sync_rerun_converges_without_duplicates(stack, account, notes_out: Path,
                                                            tmp_path: Path) -> None:
    _, key, _ = account
    area = "viking://resources/killed"
    proc = subprocess.run([sys.executable, "-c", KILLER, stack.settings.server.base_url, key, str(notes_out), area,
                           str(tmp_path / "m")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    client = OpenViking(stack.settings.server.base_url, key, key_name="killed")
    manifest = Manifest.for_target(client, area, tmp_path / "m")
    assert len(manifest.files) == 5 and not manifest.pending
    rerun = sync(client, notes_out, area, manifest_dir=tmp_path / "m")
    total = len(local_set(notes_out))
    assert (rerun.written, rerun.unchanged, rerun.missing_after_wait) == (total - 5, 5, 0)
    remote = [e.uri for e in client.walk(area)]
    assert len(remote) == len(set(remote)) == total


class _DiesAfterWrite(OpenViking):
    """The server took the batch, then the process died before recording it as confirmed."""

    def batch_write(self, *args, **kwargs):
        super().batch_write(*args, **kwargs)
        raise KeyboardInterrupt


def test_crash_between_write_and_confirm_is_owned_on_rerun(stack, account, notes_out: Path, tmp_path: Path) -> None:
    _, key, client = account
    area = "viking://resources/pending"
    dying = _DiesAfterWrite(stack.settings.server.base_url, key, key_name=client.key_name)
    with pytest.raises(KeyboardInterrupt):
        sync(dying, notes_out, area, batch_size=4, manifest_dir=tmp_path / "m")
    manifest = Manifest.for_target(client, area, tmp_path / "m")
    assert len(manifest.pending) == 4 and not manifest.files
    rerun = sync(client, notes_out, area, manifest_dir=tmp_path / "m")
    assert rerun.conflicts == [] and rerun.missing_after_wait == 0
    assert remote_files(client, area) == local_set(notes_out)


def test_planted_secrets_never_come_back_from_openviking(account, tmp_path: Path) -> None:
    from planted import generate, write_docs, write_secrets_yaml

    _, _, client = account
    area = "viking://resources/planted"
    planted = generate(n=320, seed=4242)
    secrets = write_secrets_yaml(planted, tmp_path / "secrets.yaml")
    write_docs([p for p in planted if p.filename.endswith(".md")], tmp_path / "notes")
    report = pipeline.run("notes", tmp_path / "notes", tmp_path / "out", [secrets])
    assert report.redacted > 0
    synced = sync(client, tmp_path / "out", area, manifest_dir=tmp_path / "m")
    assert synced.missing_after_wait == 0 and synced.written == report.facts - len(report.dropped)
    uris = [e.uri for e in client.walk(area)]
    text = "\n".join(client.read(u) for u in uris)
    assert "[REDACTED:" in text
    assert [p.secret_id for p in planted if any(n in text for n in p.needles)] == []
    # The server's own search must not hand any value back either (grep proves it searches).
    assert client.grep(area, "REDACTED", limit=1000)
    sample = [p.value[:20] for p in planted if p.value[:20].isalnum()][:40]
    assert len(sample) >= 20
    for needle in sample:
        assert client.grep(area, needle) == []


def test_cli_export_all_then_sync_all_as_the_configured_user(stack, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import uuid

    account_id = f"cli{uuid.uuid4().hex[:8]}"
    key = stack.root.create_account(account_id, "owner")
    monkeypatch.setenv("XDG_DATA_HOME", stack.env["XDG_DATA_HOME"])
    cfg = yaml.safe_load(stack.config_path.read_text())
    cfg["openviking"] = {"account": account_id, "user": "owner"}
    cfg["home"] = str(tmp_path / "home")
    cfg["sources"] = [
        {"kind": "notes", "path": str(EXAMPLES / "notes"), "area": "viking://resources/notes"},
        {"kind": "inventory", "path": str(EXAMPLES / "inventory.yaml"), "area": "viking://resources/ops"},
        {"kind": "secrets", "path": str(EXAMPLES / "secrets.yaml"), "area": "viking://resources/ops"},
    ]
    path = tmp_path / "muninn.yaml"
    path.write_text(yaml.safe_dump(cfg))
    # the key in this workspace's scope of the keyring (its home is its own)
    credentials.for_server(config.load(path)).set(credentials.user_key_name(account_id, "owner"), key)
    exported = stack.cli("--config", str(path), "export", "all", "--json")
    assert exported.returncode == 0, exported.stderr
    done = stack.cli("--config", str(path), "sync", "all", "--json")
    assert done.returncode == 0, done.stderr
    reports = json.loads(done.stdout)
    assert set(reports) == {"viking://resources/notes", "viking://resources/ops"}
    assert reports["viking://resources/ops"] == {"written": 12, "unchanged": 0, "removed": 0, "missing_after_wait": 0}
    one = stack.cli("--config", str(path), "sync", str(tmp_path / "home/exports/ops"), "--to",
                    "viking://resources/ops", "--json")
    assert one.returncode == 0 and json.loads(one.stdout) == {"written": 0, "unchanged": 12, "removed": 0,
                                                              "missing_after_wait": 0}
    bad = stack.cli("--config", str(path), "sync", str(tmp_path), "--to", "viking://agent/skills", "--json")
    assert bad.returncode == 2
    values = [e["value"] for e in yaml.safe_load((EXAMPLES / "secrets.yaml").read_text())]
    with OpenViking(stack.settings.server.base_url, key) as client:
        text = "\n".join(client.read(e.uri) for e in client.walk("viking://resources/ops"))
    assert "jira-api-token" in text and not any(v in text for v in values)
    assert os.environ["XDG_DATA_HOME"] == stack.env["XDG_DATA_HOME"]
