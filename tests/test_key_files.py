"""Key files on their own (no server): one sealed format for every kind, kinds that cannot be crossed,
the vault key proven against the store before it is stored, and the passphrase's sources. The reader's
key, proven against a real server, is tests/test_key_transfer.py's walk."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml
from conftest import drain_pty

from muninn.core import config, credentials
from muninn.core.errors import ConfigError, CredentialError
from muninn.nightly.backup import crypt as backup_crypt
from muninn.nightly.backup import key_transfer
from muninn.plugins.access.vault import Vault

PASS = "quartz meadow tonic ladder"
SECRETS = "- id: nas-token\n  service: nas\n  kind: token\n  value: Nq7-vault-value-9Zx\n"


@pytest.fixture
def settings(tmp_path: Path, isolated_keyring: Path):
    (tmp_path / "secrets.yaml").write_text(SECRETS)
    (tmp_path / "policy.yaml").write_text("version: 1\nareas: {raven: viking://resources/agents/raven}\n"
                                          "readers: {}\n")
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "home"), "guard": {"policy": "policy.yaml"},
                                   "vault": {"files": ["secrets.yaml"]}}))
    return config.load(cfg)


def test_the_vault_key_travels_and_is_proven_against_the_store(settings, tmp_path) -> None:
    vault = Vault(settings)
    vault.sync()
    vault.close()
    ring = credentials.for_home(settings)
    raw = ring.get(settings.vault.key_name)
    dest = tmp_path / "vault.key"
    key_transfer.export_vault(settings, dest, PASS)
    assert dest.stat().st_mode & 0o777 == 0o600 and raw not in dest.read_text()
    ring.delete(settings.vault.key_name)
    with pytest.raises(CredentialError, match="passphrase"):
        key_transfer.import_any(settings, dest, PASS + "!")
    assert ring.get(settings.vault.key_name) is None
    moved = key_transfer.import_any(settings, dest, PASS)
    assert moved.proven_by.startswith("1 value(s) opened") and ring.get(settings.vault.key_name) == raw
    # Another workspace's vault key does not open this store: refused, nothing stored.
    other = tmp_path / "other.key"
    backup_crypt.write_key_file(other, PASS, key_transfer.VAULT_KIND, b"\1" * 32)
    ring.delete(settings.vault.key_name)
    with pytest.raises(CredentialError, match="does not open with this key"):
        key_transfer.import_any(settings, other, PASS)
    assert ring.get(settings.vault.key_name) is None


@pytest.mark.parametrize("kind, reader, match", [
    (backup_crypt.KEY_FILE_KIND, lambda s, p, pw: key_transfer.import_any(s, p, pw, "raven"),
     "belongs to no reader"),
    (key_transfer.READER_KIND, lambda s, p, pw: backup_crypt.import_key(s, p, pw), "not 'muninn-backup-key'"),
    (key_transfer.VAULT_KIND, lambda s, p, pw: key_transfer.import_reader(s, p, pw), "not 'muninn-reader-key'"),
    ("something-else", key_transfer.import_any, "not a key file muninn reads"),
])
def test_a_key_file_of_one_kind_is_refused_by_another_import(settings, tmp_path, kind, reader, match) -> None:
    path = tmp_path / "k.key"
    backup_crypt.write_key_file(path, PASS, kind, b"x" * 32)
    with pytest.raises(ConfigError, match=match):
        reader(settings, path, PASS)


def test_a_relabelled_kind_does_not_open(settings, tmp_path) -> None:
    """The kind is authenticated: a vault key file relabelled as a reader's fails to open."""
    path = tmp_path / "k.key"
    backup_crypt.write_key_file(path, PASS, key_transfer.VAULT_KIND, b"x" * 32)
    path.write_text(json.dumps(json.loads(path.read_text()) | {"kind": key_transfer.READER_KIND}))
    with pytest.raises(CredentialError, match="changed since export"):
        key_transfer.import_any(settings, path, PASS)


@pytest.mark.parametrize("text", ["", "not json", "[1, 2]", '{"kind": "muninn-reader-key"}',
                                  '{"kind": "muninn-reader-key", "salt": "!!", "nonce": "", "sealed": ""}'])
def test_a_file_that_is_not_a_key_file_is_named(settings, tmp_path, text) -> None:
    path = tmp_path / "k.key"
    path.write_text(text)
    with pytest.raises(ConfigError, match="key file"):
        key_transfer.import_any(settings, path, PASS)


@pytest.mark.parametrize("env, file_text, code, words", [
    (None, None, 2, "stdin is not a terminal"),
    ("", None, 2, "the passphrase is empty"),
    (None, "\n", 2, "the passphrase is empty"),
    ("short", None, 2, "shorter than 8"),
    (None, PASS + "\nsecond line ignored\n", 0, "wrote the vault key"),
])
def test_the_passphrase_comes_from_a_file_the_environment_or_a_terminal(
        settings, tmp_path, run_muninn, monkeypatch, env, file_text, code, words) -> None:
    Vault(settings).sync()
    monkeypatch.setenv("MUNINN_CONFIG", str(tmp_path / "muninn.yaml"))
    monkeypatch.delenv("MUNINN_PASSPHRASE", raising=False)
    if env is not None:
        monkeypatch.setenv("MUNINN_PASSPHRASE", env)
    args = ["key", "export", "--vault", "--to", str(tmp_path / "v.key")]
    if file_text is not None:
        (tmp_path / "pass").write_text(file_text)
        (tmp_path / "pass").chmod(0o600)
        args += ["--passphrase-file", str(tmp_path / "pass")]
    ended = run_muninn(args, stdin="")
    assert ended.exit_code == code and words in ended.stderr + ended.stdout, ended
    assert (tmp_path / "v.key").exists() == (code == 0)
    assert "Traceback" not in ended.stderr


WEAK = ["password", "Password123!", "qwertyuiop", "hunter2hunter2", "letmeinletmein", "Summer2026!",
        "iloveyou1234", "aaaaaaaaaaaa", "1234567890", "monkeymonkey", "P@ssw0rd2026", "admin-admin-admin",
        # spaced, full-width, repeated in another script, published examples (the red team's round-4 cases)
        "p a s s w o r d 1 2", "P A S S W O R D", "ｐａｓｓｗｏｒｄ１２３", "пароль пароль", "Tr0ub4dor&3",
        "correct horse battery staple", "the quick brown fox jumps over the lazy dog", "never gonna give you up",
        "muninn muninn muninn"]
STRONG = ["quartz meadow tonic ladder", "velvet.otter.lantern.quiver", "tangerine-orbit-5521-glass",
          "Xq7#vR2m!Lp9zW4s", "blue moon rising over kelp",
          "quartz meadow tonic ladder orchid lantern quiver velvet harbor cobalt fennel drift"]    # > 72 characters


@pytest.mark.parametrize("phrase", WEAK)
def test_a_guessable_passphrase_never_seals_a_key_file(settings, tmp_path, phrase) -> None:
    with pytest.raises(ConfigError, match="too weak|shorter than 8"):
        backup_crypt.write_key_file(tmp_path / "k.key", phrase, key_transfer.VAULT_KIND, b"\1" * 32)
    assert not (tmp_path / "k.key").exists()


@pytest.mark.parametrize("phrase", STRONG)
def test_a_passphrase_of_random_words_or_characters_seals_one(settings, tmp_path, phrase) -> None:
    backup_crypt.write_key_file(tmp_path / "k.key", phrase, key_transfer.VAULT_KIND, b"\1" * 32)
    assert backup_crypt.read_key_file(tmp_path / "k.key", phrase, key_transfer.VAULT_KIND) == b"\1" * 32


def test_an_old_key_file_sealed_with_a_weak_passphrase_still_opens(settings, tmp_path, monkeypatch) -> None:
    with monkeypatch.context() as mp:       # as a muninn before the floor wrote it
        mp.setattr(backup_crypt, "check_passphrase", lambda phrase: None)
        backup_crypt.write_key_file(tmp_path / "old.key", "password", key_transfer.VAULT_KIND, b"\2" * 32)
    assert backup_crypt.read_key_file(tmp_path / "old.key", "password", key_transfer.VAULT_KIND) == b"\2" * 32


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_a_passphrase_file_others_can_read_is_refused_for_writing_and_taken_for_reading(
        settings, tmp_path, run_muninn, monkeypatch, mode) -> None:
    Vault(settings).sync()
    monkeypatch.setenv("MUNINN_CONFIG", str(tmp_path / "muninn.yaml"))
    monkeypatch.delenv("MUNINN_PASSPHRASE", raising=False)
    phrase = tmp_path / "pass"
    phrase.write_text(PASS + "\n")
    phrase.chmod(mode)
    ended = run_muninn(["key", "export", "--vault", "--to", str(tmp_path / "v.key"), "--passphrase-file", str(phrase)])
    assert ended.exit_code == 2 and "chmod 600" in ended.stderr and not (tmp_path / "v.key").exists(), ended
    phrase.chmod(0o600)
    assert run_muninn(["key", "export", "--vault", "--to", str(tmp_path / "v.key"),
                       "--passphrase-file", str(phrase)]).exit_code == 0
    phrase.chmod(mode)
    taken = run_muninn(["key", "import", str(tmp_path / "v.key"), "--passphrase-file", str(phrase)])
    assert taken.exit_code == 0, taken


def test_export_names_the_choice_and_the_reader(settings, tmp_path, run_muninn, monkeypatch) -> None:
    monkeypatch.setenv("MUNINN_CONFIG", str(tmp_path / "muninn.yaml"))
    monkeypatch.setenv("MUNINN_PASSPHRASE", PASS)
    both = run_muninn(["key", "export", "--vault", "--profile", "raven"])
    assert both.exit_code == 2 and "choose one of --profile NAME, --vault or --backup" in both.stderr
    nobody = run_muninn(["key", "export", "--profile", "nobody", "--to", str(tmp_path / "n.key")])
    assert nobody.exit_code == 2 and "no reader named 'nobody'" in nobody.stderr


def _until(fd: int, word: bytes, seen: bytearray, timeout: float = 60) -> None:
    import select

    while word not in seen:
        ready, _, _ = select.select([fd], [], [], timeout)
        assert ready, f"no {word!r} on the terminal; it showed {bytes(seen)!r}"
        seen += os.read(fd, 4096)


def test_a_terminal_is_asked_twice_without_echo(settings, tmp_path) -> None:
    """On a real terminal (the child's controlling tty), the passphrase is typed twice and never shown."""
    import pty

    Vault(settings).sync()
    dest = tmp_path / "v.key"
    env = {k: v for k, v in os.environ.items() if k != "MUNINN_PASSPHRASE"}
    env["MUNINN_CONFIG"] = str(tmp_path / "muninn.yaml")
    pid, fd = pty.fork()
    if pid == 0:    # the child: its controlling terminal is the pty
        os.execve(sys.executable, [sys.executable, "-m", "muninn", "key", "export", "--vault", "--to", str(dest)],
                  env)
    seen = bytearray()
    # Typed only once getpass has turned echo off: it writes its " " prompt after, and flushes input before.
    _until(fd, b"passphrase: ", seen)
    os.write(fd, PASS.encode() + b"\n")
    _until(fd, b"confirmation: ", seen)
    os.write(fd, PASS.encode() + b"\n")
    _until(fd, b"wrote the vault key", seen)
    _, status = os.waitpid(pid, 0)
    seen += drain_pty(fd)
    assert os.waitstatus_to_exitcode(status) == 0, bytes(seen)
    assert PASS.encode() not in seen
    assert backup_crypt.read_key_file(dest, PASS, key_transfer.VAULT_KIND)
