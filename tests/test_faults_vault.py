"""A damaged vault store, damaged for real on disk: every `secret` command says so in one sentence
(exit 15) with the way to restore it, never "unknown secret" from a store read as empty;
`vault sync` moves it aside and rebuilds it from the YAML; the MCP redactor still starts with the
YAML's values while the vault tools answer with the sentence."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from muninn.core import config
from muninn.core.errors import ExitCode
from muninn.plugins.access.store import VaultDamaged
from muninn.plugins.access.vault import Vault
from muninn.plugins.mcp.redaction import ValueRedactor

TOKEN = "tok_9f8Q2mZxL4vB7nK1pR6w"
ENTRIES = [{"id": "jira-api-token", "service": "jira", "environment": "prod", "kind": "token",
            "notes": "Personal bearer token for the Jira REST API", "value": TOKEN}]
DAMAGE = ("truncate-0", "truncate-half", "truncate-mid-page", "garbage", "zeroed-pages")


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    page = int.from_bytes(data[16:18], "big")
    path.write_bytes({"truncate-0": b"", "truncate-half": data[: len(data) // 2],
                      "truncate-mid-page": data[: len(data) - page // 2],
                      "garbage": bytes((i * 37 + 11) % 256 for i in range(len(data))),
                      "zeroed-pages": data[:page] + bytes(len(data) - page)}[how])


@pytest.fixture
def cfg(tmp_path: Path, isolated_keyring: Path) -> Path:
    secrets = tmp_path / "secrets.yaml"
    secrets.write_text(yaml.safe_dump(ENTRIES))
    path = tmp_path / "muninn.yaml"
    path.write_text(yaml.safe_dump({"vault": {"files": [str(secrets)]},
                                    "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"}}))
    v = Vault.open(config.load(path))
    v.sync()
    v.close()
    return path


def cli(cfg: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "muninn", "--config", str(cfg), *args], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_vault_is_one_sentence_and_vault_sync_restores_it(cfg: Path, how: str) -> None:
    settings = config.load(cfg)
    store = settings.paths.vault_store
    _damage(store, how)
    for args in (("secret", "find", "jira"), ("secret", "show", "jira-api-token")):
        done = cli(cfg, *args)
        lines = [ln for ln in done.stderr.strip().splitlines() if ln.strip()]
        assert done.returncode == ExitCode.VAULT_DAMAGED, (args, done.stderr)
        assert len(lines) == 1 and "Traceback" not in done.stderr and done.stdout == ""
        assert str(store) in lines[0] and "secret load" in lines[0] and "unreadable" in lines[0]
    # The MCP server's redactor starts: the YAML's values are still known, the vault tools say why not.
    assert TOKEN not in ValueRedactor.from_settings(settings).scrub(f"token {TOKEN}")
    with pytest.raises(VaultDamaged):
        Vault.open(settings).find("jira")
    # Restore: vault sync moves the damaged file aside and rebuilds from the YAML; then it converges.
    fixed = cli(cfg, "vault", "sync", "--json")
    assert fixed.returncode == 0, fixed.stderr
    report = json.loads(fixed.stdout)
    assert report["added"] == ["jira-api-token"] and Path(report["moved_aside"]).exists()
    found = cli(cfg, "secret", "find", "jira", "--json")
    assert found.returncode == 0 and "jira-api-token" in found.stdout and TOKEN not in found.stdout
