"""Backups that leave the host (issue 50 §6), through the real CLI, a real restic (Debian's, fetched from
the package registry when it is not installed) and the real server: the sealed archives are copied into a
repository on another path, retention is restic's reconciled with nightly.keep_*, `restic check` is the
drill, and a restore from the repository alone goes through the restore gate. A wrong password, a
destination that is away and a damaged repository are each one sentence with exit 29, and change nothing
local."""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml
from test_backup import RAVEN, RAVEN_URI, cli, make_workspace, reader

from muninn.core import config, credentials
from muninn.core import policy as policy_mod
from muninn.nightly import doctor_check, purge
from muninn.nightly.backup import make as backup
from muninn.nightly.backup import offsite
from muninn.plugins.stack import policy_apply

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def restic_bin(tmp_path_factory) -> Path:
    found = shutil.which("restic")
    if found:
        return Path(found)
    where = tmp_path_factory.mktemp("restic-deb")
    got = subprocess.run(["apt-get", "download", "restic"], cwd=where, capture_output=True, text=True)
    debs = sorted(where.glob("restic_*.deb"))
    assert got.returncode == 0 and debs, got.stderr
    subprocess.run(["dpkg-deb", "-x", str(debs[-1]), str(where / "x")], check=True)
    return where / "x" / "usr" / "bin" / "restic"


def _with_offsite(path: Path, repository: Path | str, restic_bin: Path, **over) -> None:
    cfg = yaml.safe_load(path.read_text())
    cfg.setdefault("nightly", {})["offsite"] = {"repository": str(repository), "restic": str(restic_bin), **over}
    path.write_text(yaml.safe_dump(cfg))


@pytest.fixture(scope="module")
def world(stack, tmp_path_factory, restic_bin) -> dict:
    tmp = tmp_path_factory.mktemp("offsite")
    account = f"os{uuid.uuid4().hex[:8]}"
    path = make_workspace(tmp, stack.settings.server.port, account)
    repository = tmp / "other-disk" / "repo"
    _with_offsite(path, repository, restic_bin)
    settings = config.load(path)
    root = credentials.root_key_name()
    credentials.for_server(settings).set(root, credentials.for_server(stack.settings).require(root, fix="-"))
    assert policy_apply.apply(settings, policy_mod.load_for(settings), say=lambda m: None).ok
    from muninn.plugins.access.vault import Vault

    Vault(settings).sync()
    # No export or sync: a backup holds what nothing rebuilds, and the agent's own note is that.
    with reader(settings, "raven") as raven:
        raven.write(RAVEN_URI, RAVEN, wait=True)
    env = {**stack.env, "MUNINN_CONFIG": str(path), "MUNINN_HOME": str(tmp / "home")}
    assert cli(env, "backup", "offsite", "init").returncode == 0
    pushed = cli(env, "backup", "offsite", "push", "--fresh", "--json")
    assert pushed.returncode == 0, pushed.stderr
    return {"settings": settings, "env": env, "config": path, "repository": repository, "tmp": tmp,
            "pushed": json.loads(pushed.stdout), "restic": restic_bin}


def test_a_sealed_backup_is_copied_once_and_listed(world) -> None:
    assert len(world["pushed"]["sent"]) == 1 and world["pushed"]["sent"][0].endswith(".mbk")
    again = cli(world["env"], "backup", "offsite", "push", "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["sent"] == [], again.stderr
    listed = json.loads(cli(world["env"], "backup", "offsite", "list", "--json").stdout)
    assert [x["archive"] for x in listed] == world["pushed"]["sent"]
    # What left the host is the sealed file, byte for byte: no live database, nothing in the clear.
    blobs = b"".join(p.read_bytes() for p in (world["repository"] / "data").rglob("*") if p.is_file())
    assert b"RVN-5120" not in blobs
    checked = cli(world["env"], "backup", "offsite", "check")
    assert checked.returncode == 0, checked.stderr


def test_a_deleted_write_comes_back_from_the_repository_alone_through_the_gate(world) -> None:
    settings = world["settings"]
    with reader(settings, "raven") as raven:
        purge.retry_busy(lambda: raven.rm(RAVEN_URI))
        raven.wait()
    shutil.rmtree(backup.folder(settings))           # the host's own copies are gone
    done = cli(world["env"], "backup", "offsite", "restore", "--to", "viking://resources/agents/raven", "--json")
    assert done.returncode == 0, done.stderr
    assert RAVEN_URI in json.loads(done.stdout)["written"]
    with reader(settings, "raven") as raven:
        assert "RVN-5120" in raven.read(RAVEN_URI)
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in backup.listing(settings))


def test_a_forged_archive_in_the_repository_is_refused_with_exit_22(world, tmp_path) -> None:
    """Whoever can write the repository (and knows its password) still cannot make a restore take a file
    that the backup key did not seal."""
    forged = tmp_path / "muninn-backup-20261201T031500.000000Z.mbk"
    forged.write_bytes(b"\x1f\x8b" + b"not a sealed archive" * 10)
    env = {**offsite._env(world["settings"])}
    done = subprocess.run([str(world["restic"]), "backup", "--tag", offsite.TAG, "--time", "2030-01-01 00:00:00",
                           str(forged)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    refused = cli(world["env"], "backup", "offsite", "restore", forged.name, "--all")
    assert refused.returncode == 22, refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_wrong_password_is_one_sentence_with_exit_29_and_changes_nothing(world) -> None:
    ring = credentials.for_home(world["settings"])
    before = sorted(p.name for p in backup.listing(world["settings"]))
    ring.set(offsite.OWN_PASSWORD, "not the repository's password")
    try:
        done = cli(world["env"], "backup", "offsite", "push", "--fresh")
    finally:
        ring.delete(offsite.OWN_PASSWORD)
    assert done.returncode == 29, done.stderr
    assert "another password" in done.stderr and "Traceback" not in done.stderr
    # --fresh made its backup before the repository refused: kept, and the earlier ones untouched.
    after = sorted(p.name for p in backup.listing(world["settings"]))
    assert set(before) <= set(after)


def test_a_destination_that_is_away_is_exit_29_and_doctor_says_so(world, tmp_path) -> None:
    away = tmp_path / "muninn.yaml"
    away.write_text(world["config"].read_text())
    _with_offsite(away, Path("/nonexistent/mount/repo"), world["restic"])
    env = {**world["env"], "MUNINN_CONFIG": str(away)}
    done = cli(env, "backup", "offsite", "push")
    assert done.returncode == 29 and "/nonexistent/mount/repo" in done.stderr, done.stderr
    (row,) = doctor_check.offsite_backup(config.load(away))
    assert row.level == "fail" and "/nonexistent/mount/repo" in row.detail
    (row,) = doctor_check.offsite_backup(world["settings"])
    assert row.level == "ok" and "the newest copied" in row.detail, row


def test_a_damaged_repository_fails_the_drill(world, tmp_path) -> None:
    copy = tmp_path / "repo"
    shutil.copytree(world["repository"], copy)
    pack = max((p for p in (copy / "data").rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)
    raw = bytearray(pack.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    pack.write_bytes(bytes(raw))
    damaged = tmp_path / "muninn.yaml"
    damaged.write_text(world["config"].read_text())
    _with_offsite(damaged, copy, world["restic"])
    done = cli({**world["env"], "MUNINN_CONFIG": str(damaged)}, "backup", "offsite", "check")
    assert done.returncode == 29, done.stdout + done.stderr


def test_retention_is_restics_reconciled_with_nightly_keep(world, tmp_path) -> None:
    """Three nights and a week-old one copied, keep_backups 2 and no weekly: two remain in the repository."""
    repo = tmp_path / "repo"
    cfg_path = tmp_path / "muninn.yaml"
    cfg = yaml.safe_load(world["config"].read_text())
    cfg["home"] = str(tmp_path / "home")
    cfg.setdefault("nightly", {}).update(keep_backups=2, keep_weekly_backups=0,
                                         offsite={"repository": str(repo), "restic": str(world["restic"]),
                                                  "keep_hourly": 0})
    cfg_path.write_text(yaml.safe_dump(cfg))
    settings = config.load(cfg_path)
    credentials.for_home(settings).set("backup:key", credentials.for_home(world["settings"]).get("backup:key"))
    folder = backup.folder(settings)
    folder.mkdir(parents=True)
    for day in ("20261120", "20261204", "20261205", "20261206"):
        (folder / f"muninn-backup-{day}T031500.000000Z.mbk").write_bytes(uuid.uuid4().bytes)
    assert offsite.init(settings) == "created"
    pushed = offsite.push(settings)
    assert len(pushed.sent) == 4 and pushed.forgotten == 2
    assert [offsite.archive_name(s)[14:22] for s in offsite.snapshots(settings)] == ["20261205", "20261206"]
    assert "--keep-daily" in offsite.retention_args(settings)


def test_the_hourly_copy_is_scheduled_with_the_nightly_timer(world) -> None:
    from muninn.nightly import timers

    units = timers.units(world["settings"], world["config"])
    assert "backup offsite push --fresh" in units["muninn-offsite.service"]
    assert "OnCalendar=*-*-* *:45:00" in units["muninn-offsite.timer"]
    assert any("backup offsite push --fresh" in line for line in timers.cron_lines(world["settings"], world["config"]))


def test_a_repository_over_sftp_on_another_host_takes_the_copies(world, tmp_path) -> None:
    """restic's sftp backend through an ssh config of the user's (an alias that pins the host key; ssh reads
    the passwd entry's home, not $HOME, so the test names its file), against Debian's openssh-server."""
    from conftest import SESSION_DIR, free_port
    from sshd import running

    with running(tmp_path / "sshd", free_port(), SESSION_DIR / "cache") as server:
        home = tmp_path / "user"
        (home / ".ssh").mkdir(parents=True, mode=0o700)
        (home / ".ssh" / "config").write_text(
            f"Host backuphost\n  HostName 127.0.0.1\n  Port {server.port}\n  User {server.user}\n"
            f"  IdentityFile {server.key}\n  IdentitiesOnly yes\n  UserKnownHostsFile {server.known_hosts}\n"
            "  StrictHostKeyChecking yes\n  BatchMode yes\n")
        cfg = tmp_path / "muninn.yaml"
        cfg.write_text(world["config"].read_text())
        _with_offsite(cfg, f"sftp:backuphost:{tmp_path / 'far' / 'repo'}", world["restic"],
                      options=[f"sftp.command=ssh -F {home / '.ssh' / 'config'} backuphost -s sftp"])
        env = {**world["env"], "MUNINN_CONFIG": str(cfg)}
        assert cli(env, "backup", "offsite", "init").returncode == 0
        pushed = cli(env, "backup", "offsite", "push", "--json")
        assert pushed.returncode == 0, pushed.stderr
        assert json.loads(pushed.stdout)["sent"], pushed.stdout
        assert (tmp_path / "far" / "repo" / "config").is_file()
