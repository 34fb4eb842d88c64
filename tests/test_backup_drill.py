"""The restore drill and the sealing of backups, on real files (no server needed: the local parts alone
make a backup): every way a backup can be damaged fails the drill loudly, a sealed backup does not
open without its key, and the key travels only sealed with a passphrase."""

from __future__ import annotations

import base64
import io
import json
import tarfile
from pathlib import Path

import pytest
import yaml

from muninn.core import config, credentials
from muninn.core.errors import ConfigError, CredentialError
from muninn.nightly.backup import archive as backup_archive
from muninn.nightly.backup import crypt as backup_crypt
from muninn.nightly.backup import make as backup
from muninn.nightly.backup import verify as backup_verify
from muninn.nightly.jobs import Context
from muninn.nightly.jobs.backup_verify import verify_job

PASS = "quartz meadow tonic ladder"


@pytest.fixture
def settings(tmp_path: Path, isolated_keyring: Path):
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "home"), "guard": {"policy": str(tmp_path / "policy.yaml")}}))
    (tmp_path / "policy.yaml").write_text("version: 1\nareas: {raven: viking://resources/agents/raven}\n"
                                          "readers: {}\n")
    s = config.load(cfg)
    s.paths.sync_manifests.mkdir(parents=True)
    for n in range(3):
        (s.paths.sync_manifests / f"area{n}.json").write_text(json.dumps({"files": {f"f{n}.md": "ab" * 32}}))
    s.paths.approved_skills.parent.mkdir(parents=True)
    s.paths.approved_skills.write_text('["triage"]')
    return s


def plain(settings) -> Path:
    """An unsealed backup (as made before sealing, but of format 2)."""
    made = backup.create(settings)
    archive = backup_archive.Archive.from_bytes(backup_crypt.open_bytes(settings, made.path), str(made.path))
    data = backup_archive.pack(archive.members, archive.index)
    out = made.path.with_suffix(".tar.gz")
    out.write_bytes(data)
    made.path.unlink()
    return out


def test_a_fresh_backup_passes_the_drill_and_holds_every_local_part(settings) -> None:
    made = backup.create(settings)
    report = backup_verify.drill(settings)
    assert report.path == made.path and report.problems == []
    assert report.local_files == 5          # policy, 3 manifests, approved skills
    assert {"policy", "sync-manifests", "approved-skills"} <= set(made.included)
    assert verify_job(Context(settings)).status == "ok"
    assert not list(backup.folder(settings).glob(".drill-*"))        # the scratch folder is gone


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]


SEALED_DAMAGE = {
    "a byte flipped in the ciphertext": lambda d: _flip(d, len(d) // 2),
    "a byte flipped in the nonce": lambda d: _flip(d, len(backup_crypt.MAGIC) + 3),
    "the last byte flipped (the tag)": lambda d: _flip(d, len(d) - 1),
    "cut in half": lambda d: d[:len(d) // 2],
    "cut by one byte": lambda d: d[:-1],
    "cut inside the header": lambda d: d[:10],
    "empty": lambda d: b"",
    "a byte appended": lambda d: d + b"\0",
}


@pytest.mark.parametrize("damage", sorted(SEALED_DAMAGE))
def test_a_damaged_sealed_backup_fails_the_drill_and_the_nightly_job(settings, damage) -> None:
    made = backup.create(settings)
    made.path.write_bytes(SEALED_DAMAGE[damage](made.path.read_bytes()))
    with pytest.raises(backup_archive.BackupUnreadable):
        backup_verify.drill(settings, made.path)
    result = verify_job(Context(settings))
    assert result.status == "findings" and made.path.name in result.detail


def test_a_sealed_backup_renamed_to_pass_for_another_does_not_open(settings) -> None:
    made = backup.create(settings)
    other = made.path.with_name("muninn-backup-20200101T000000.000000Z.mbk")
    made.path.rename(other)
    with pytest.raises(backup_archive.BackupUnreadable, match="renamed"):
        backup_verify.drill(settings, other)


PLAIN_DAMAGE = {
    "a member's bytes changed": (lambda m: {**m, "local/policy/policy.yaml": b"version: 1\n"}, "differ"),
    "a member removed": (lambda m: {k: v for k, v in m.items() if k != "local/approved-skills/approved.json"},
                         "missing"),
    "a member added": (lambda m: {**m, "local/policy/extra.yaml": b"x"}, "not named"),
    "a member emptied": (lambda m: {**m, "local/sync-manifests/area1.json": b""}, "differ"),
}


@pytest.mark.parametrize("damage", sorted(PLAIN_DAMAGE))
def test_a_member_that_differs_from_the_index_fails_the_drill_by_name(settings, damage) -> None:
    made = backup.create(settings)
    archive = backup_archive.Archive.from_bytes(backup_crypt.open_bytes(settings, made.path), str(made.path))
    change, word = PLAIN_DAMAGE[damage]
    out = made.path
    # The index keeps the true hashes; only the members are changed, as a bit rot before sealing would.
    repacked = _repack(backup_archive.Archive("x", archive.index, change(dict(archive.members))))
    out.write_bytes(backup_crypt.seal(settings, repacked, out.name))
    report = backup_verify.drill(settings, out)
    assert report.problems and any(word in p for p in report.problems), report.problems
    with pytest.raises(backup_verify.DrillFailed):
        backup_verify.raise_for(report)
    assert verify_job(Context(settings)).status == "findings"


def _repack(archive: backup_archive.Archive) -> bytes:
    """Members and index as given, hashes not recomputed (backup_archive.pack would fix them)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in [*archive.members.items(), (backup_archive.INDEX, json.dumps(archive.index).encode())]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_a_truncated_plain_backup_is_unreadable(settings) -> None:
    out = plain(settings)
    out.write_bytes(out.read_bytes()[:-40])
    with pytest.raises(backup_archive.BackupUnreadable):
        backup_verify.drill(settings, out, allow_unsealed=True)


def test_no_backup_at_all_fails_the_job(settings) -> None:
    result = verify_job(Context(settings))
    assert result.status == "findings" and "no backup" in result.detail


def test_a_sealed_backup_does_not_open_without_its_key_nor_with_another(settings, tmp_path) -> None:
    made = backup.create(settings)
    assert backup_archive.Archive.from_bytes(backup_crypt.open_bytes(settings, made.path), "x").members
    sealed = made.path.read_bytes()
    assert sealed.startswith(backup_crypt.MAGIC) and b"triage" not in sealed and b"version: 1" not in sealed
    ring = credentials.for_home(settings)
    ring.delete(backup_crypt.KEY_NAME)
    with pytest.raises(CredentialError, match="backup key"):
        backup_verify.drill(settings, made.path)
    backup_crypt.key(settings, create=True)             # a new key: not the one it was sealed with
    with pytest.raises(backup_archive.BackupUnreadable, match="another key"):
        backup_verify.drill(settings, made.path)


def test_the_key_travels_sealed_with_a_passphrase_and_opens_the_backups_again(settings, tmp_path) -> None:
    made = backup.create(settings)
    raw = credentials.for_home(settings).get(backup_crypt.KEY_NAME)
    dest = tmp_path / "backup.key"
    backup_crypt.export_key(settings, dest, PASS)
    assert dest.stat().st_mode & 0o777 == 0o600
    text = dest.read_text()
    assert raw not in text and base64.b64decode(raw).hex() not in text
    with pytest.raises(ConfigError, match="overwrite"):
        backup_crypt.export_key(settings, dest, PASS)
    with pytest.raises(ConfigError, match="shorter"):
        backup_crypt.export_key(settings, tmp_path / "short.key", "short")
    credentials.for_home(settings).delete(backup_crypt.KEY_NAME)
    with pytest.raises(CredentialError, match="passphrase"):
        backup_crypt.import_key(settings, dest, PASS + "!")
    backup_crypt.import_key(settings, dest, PASS)
    assert backup_verify.drill(settings, made.path).problems == []
    backup_crypt.key(settings)      # present again
    credentials.for_home(settings).set(backup_crypt.KEY_NAME, base64.b64encode(b"\1" * 32).decode())
    with pytest.raises(ConfigError, match="another backup key"):
        backup_crypt.import_key(settings, dest, PASS)


def test_a_backup_made_before_sealing_opens_only_when_asked_by_name(settings) -> None:
    out = plain(settings)
    assert out.read_bytes().startswith(backup_crypt.GZIP)
    with pytest.raises(backup_archive.BackupRefused, match="not sealed"):
        backup_verify.drill(settings, out)
    assert backup_verify.drill(settings, out, allow_unsealed=True).problems == []
    # The nightly drill never opens one: the latest backup being plain is a finding.
    assert verify_job(Context(settings)).status == "findings"


@pytest.mark.parametrize("name", ["muninn-backup-20991231T000000.000000Z.mbk", "muninn-backup-x.tar.gz"])
def test_a_plain_archive_under_any_backup_name_is_refused_with_exit_22(settings, run_muninn, monkeypatch,
                                                                      name) -> None:
    monkeypatch.setenv("MUNINN_CONFIG", str(settings.source_file))
    forged = backup.folder(settings) / name
    forged.parent.mkdir(parents=True, exist_ok=True)
    forged.write_bytes(plain(settings).read_bytes())
    for args in (["backup", "verify", str(forged)], ["backup", "restore", str(forged), "--all"]):
        ended = run_muninn(args)
        assert ended.exit_code == 22 and "not sealed" in ended.stderr and "Traceback" not in ended.stderr


def test_the_cli_drill_exits_1_with_one_sentence(settings, run_muninn, monkeypatch) -> None:
    monkeypatch.setenv("MUNINN_CONFIG", str(settings.source_file))
    made = backup.create(settings)
    assert run_muninn(["backup", "verify", "--json"]).exit_code == 0
    made.path.write_bytes(made.path.read_bytes()[:-5])
    ended = run_muninn(["backup", "verify"])
    assert ended.exit_code == 1 and "Traceback" not in ended.stderr and made.path.name in ended.stderr
