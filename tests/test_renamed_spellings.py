"""One meaning per flag and verb (issue 51, item 8): every old spelling still runs, through the installed entry
point, and says on stderr in one sentence what it is now; the new spelling runs without that sentence.

`vault sync` is `secret load`; `backup key export DEST` / `backup key import SRC` are `key export --backup --to
FILE` / `key import --from FILE`; `key import FILE` is `key import --from FILE`; `embed fetch` is `models
fetch`; `verify -p N` is `verify -j N` (`-p` is `--profile` everywhere else)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from conftest import Ended

from muninn.core.errors import ExitCode

VALUE = "Ren4med-Sp3lling-Qz8w"
PASS = "a long passphrase for moving keys"


@pytest.fixture
def muninn(tmp_path: Path, isolated_keyring: Path, run_muninn, monkeypatch: pytest.MonkeyPatch):
    secrets = tmp_path / "secrets.yaml"
    secrets.write_text(f"- id: wiki-token\n  service: wiki\n  value: {VALUE}\n")
    os.chmod(secrets, 0o600)
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "home"), "vault": {"files": ["secrets.yaml"]},
                                   "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"}}))
    monkeypatch.setenv("MUNINN_PASSPHRASE", PASS)

    def run(*argv: str) -> Ended:
        done = run_muninn(["--config", str(cfg), *argv])
        assert "Traceback" not in done.stderr
        return done

    return run


def _renamed(done: Ended, old: str, new: str) -> None:
    line = [ln for ln in done.stderr.splitlines() if "is now" in ln]
    assert line == [f"muninn: `{old}` is now `{new}`; the old spelling still works for now."], done.stderr


def test_vault_sync_is_secret_load(muninn) -> None:
    old = muninn("vault", "sync", "--json")
    assert old.exit_code == 0 and json.loads(old.stdout)["added"] == ["wiki-token"]
    _renamed(old, "vault sync", "secret load")
    new = muninn("secret", "load", "--json")
    assert new.exit_code == 0 and json.loads(new.stdout)["unchanged"] == 1 and "is now" not in new.stderr


def test_the_backup_key_moves_by_key_export_and_import_and_the_old_spelling(muninn, tmp_path: Path) -> None:
    from muninn.core import config
    from muninn.nightly.backup import crypt

    new_file, old_file = tmp_path / "new.key", tmp_path / "old.key"
    assert muninn("key", "export", "--backup").exit_code == 4    # no backup key yet: says so (keyring)
    crypt.key(config.load(tmp_path / "muninn.yaml"), create=True)
    new = muninn("key", "export", "--backup", "--to", str(new_file), "--json")
    assert new.exit_code == 0 and json.loads(new.stdout)["kind"] == crypt.KEY_FILE_KIND and "is now" not in new.stderr
    old = muninn("backup", "key", "export", str(old_file))
    assert old.exit_code == 0 and old_file.stat().st_mode & 0o777 == 0o600
    _renamed(old, "backup key export FILE", "key export --backup --to FILE")
    new = muninn("key", "import", "--from", str(new_file))
    assert new.exit_code == 0 and "stored the backup key" in new.stderr and "is now" not in new.stderr
    _renamed(muninn("backup", "key", "import", str(old_file)), "backup key import FILE", "key import --from FILE")
    positional = muninn("key", "import", str(new_file))
    assert positional.exit_code == 0 and "stored the backup key" in positional.stderr
    _renamed(positional, "key import FILE", "key import --from FILE")


def test_embed_fetch_is_models_fetch(muninn) -> None:
    old, new = muninn("embed", "fetch", "nobody/nothing"), muninn("models", "fetch", "nobody/nothing")
    assert old.exit_code == new.exit_code == ExitCode.STACK
    assert "not a model muninn fetches" in old.stderr and "not a model muninn fetches" in new.stderr
    _renamed(old, "embed fetch", "models fetch")
    assert "is now" not in new.stderr


def test_verify_p_is_verify_j(muninn) -> None:
    old, new = muninn("verify", "-p", "2", "--dry-run"), muninn("verify", "-j", "2", "--dry-run")
    assert old.exit_code == new.exit_code == 0 and old.stdout == new.stdout
    _renamed(old, "verify -p N", "verify -j N (or --parallel N)")
    assert "is now" not in new.stderr


def test_the_renamed_groups_are_not_listed_but_still_run(muninn) -> None:
    top = muninn("--help")
    assert "  vault " not in top.stdout and "  secret " in top.stdout
    assert "  key " not in muninn("backup", "--help").stdout
    assert "  fetch " not in muninn("embed", "--help").stdout
    assert "  load " in muninn("secret", "--help").stdout
