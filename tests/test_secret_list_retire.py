"""`muninn secret list`, `secret retire ID` and `secret find '*'` through the installed entry point: the
list shows metadata only (id, kind, service, the inventory entries that use it, created and rotated
dates; never a value, `--json` too); retire takes the value out of the vault, keeps it as a salted hash
among the retired values (the server leak scan still finds it) and comments out its YAML entry; a value
written in a secrets file is refused (8); an unknown id is bad input (2); a glob lists every match."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from conftest import Ended

from muninn.core import config
from muninn.core.errors import ExitCode
from muninn.guards.known import secret_values
from muninn.guards.known.retired import Ledger

TOKEN = "Gr4fanaAdm1n-Tok3n-Zq8w"
NEW = "Rot4ted-Gr4fana-Qx7v2Lp"
RESTIC = "restic-Pw-9Vk2Lq7Xz4"
IN_FILE = "Wr1tten-In-F1le-Hp3s"


@pytest.fixture
def world(tmp_path: Path, isolated_keyring: Path) -> Path:
    secrets = tmp_path / "secrets.yaml"
    secrets.write_text(f"# my secrets' metadata\n- id: typed-in-file\n  service: wiki\n  value: {IN_FILE}\n")
    os.chmod(secrets, 0o600)
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(yaml.safe_dump([
        {"id": "grafana", "kind": "service", "access": ["open https://grafana.lab"], "secrets": ["grafana-admin"]},
        {"id": "nas-backup", "kind": "service", "access": ["restic snapshots"], "secrets": ["restic-b2-repo"]},
    ]))
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({
        "vault": {"files": ["secrets.yaml"]}, "inventory": {"files": ["inventory.yaml"]},
        "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"},
    }))
    return cfg


@pytest.fixture
def invoke(run_muninn, world: Path):
    def run(*argv: str, stdin: str | None = None) -> Ended:
        result = run_muninn(["--config", str(world), *argv], stdin)
        assert "Traceback" not in result.stderr
        return result

    return run


def _fill(invoke) -> None:
    assert invoke("vault", "sync").exit_code == 0
    for sid, value, service in (("grafana-admin", TOKEN, "grafana"), ("restic-b2-repo", RESTIC, "restic")):
        done = invoke("secret", "add", sid, "--stdin", "--service", service, "--kind", "password", stdin=value)
        assert done.exit_code == 0, done.stderr


def test_list_shows_metadata_dates_and_use_never_a_value(invoke, world: Path) -> None:
    _fill(invoke)
    rotated = invoke("secret", "add", "grafana-admin", "--stdin", "--replace", stdin=NEW)
    assert rotated.exit_code == 0, rotated.stderr
    listed = invoke("secret", "list", "--json")
    assert listed.exit_code == 0, listed.stderr
    rows = {r["id"]: r for r in json.loads(listed.stdout)}
    assert set(rows) == {"grafana-admin", "restic-b2-repo", "typed-in-file"}
    g = rows["grafana-admin"]
    assert g["kind"] == "password" and g["service"] == "grafana" and g["used_by"] == ["grafana"]
    assert g["created_at"] and g["rotated_at"] and g["rotated_at"] >= g["created_at"]
    assert rows["restic-b2-repo"]["rotated_at"] is None and rows["restic-b2-repo"]["used_by"] == ["nas-backup"]
    assert rows["typed-in-file"]["used_by"] == [] and rows["typed-in-file"]["entry"].endswith("secrets.yaml:2")
    plain = invoke("secret", "list")
    assert plain.exit_code == 0
    assert "grafana-admin" in plain.stdout and "nas-backup" in plain.stdout and "never" in plain.stdout
    said = listed.stdout + listed.stderr + plain.stdout + plain.stderr
    for value in (TOKEN, NEW, RESTIC, IN_FILE):
        assert value not in said


def test_find_star_is_a_glob(invoke) -> None:
    _fill(invoke)
    every = invoke("secret", "find", "*", "--json")
    assert every.exit_code == 0, every.stderr
    assert [h["id"] for h in json.loads(every.stdout)] == ["grafana-admin", "restic-b2-repo", "typed-in-file"]
    some = invoke("secret", "find", "res*", "--json")
    assert [h["id"] for h in json.loads(some.stdout)] == ["restic-b2-repo"]
    assert invoke("secret", "find", "nothing-*").exit_code == ExitCode.CHECK_FAILED
    # Words still rank, as before.
    assert json.loads(invoke("secret", "find", "grafana", "--json").stdout)[0]["id"] == "grafana-admin"


def test_retire_takes_the_value_out_and_keeps_it_known_as_retired(invoke, world: Path) -> None:
    _fill(invoke)
    settings = config.load(world)
    assert TOKEN in secret_values.known(settings)
    done = invoke("secret", "retire", "grafana-admin", "--json")
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout) == {"retired": "grafana-admin", "entry": str(world.parent / "secrets.yaml")}
    # Gone from the vault and from the live known values...
    rows = {r["id"] for r in json.loads(invoke("secret", "list", "--json").stdout)}
    assert rows == {"restic-b2-repo", "typed-in-file"}
    settings = config.load(world)
    assert TOKEN not in secret_values.known(settings) and RESTIC in secret_values.known(settings)
    assert invoke("secret", "show", "grafana-admin").exit_code == ExitCode.BAD_INPUT
    # ...still found as a retired value, by its salted hash (what the leak scan and purge use).
    ledger = Ledger(settings.paths.retired_hashes)
    hits = ledger.retired(secret_values.known(settings)).scan(f"old note: password {TOKEN} here")
    assert [h.secret_id for h in hits] == ["grafana-admin"]
    assert TOKEN not in settings.paths.retired_hashes.read_text()
    # Its YAML entry is commented out, not lost; the next sync neither fails nor brings it back.
    text = (world.parent / "secrets.yaml").read_text()
    assert "# retired " in text and "# - id: grafana-admin" in text
    assert TOKEN not in text
    assert invoke("vault", "sync").exit_code == 0
    assert "grafana-admin" not in {r["id"] for r in json.loads(invoke("secret", "list", "--json").stdout)}
    # The access log says who retired what, never the value.
    log = settings.paths.access_log.read_text()
    assert '"action": "retire"' in log and TOKEN not in log


def test_retire_refuses_a_value_written_in_a_file_and_an_unknown_id(invoke, world: Path) -> None:
    _fill(invoke)
    refused = invoke("secret", "retire", "typed-in-file")
    assert refused.exit_code == ExitCode.REFUSED
    assert "secrets.yaml" in refused.stderr and "vault sync" in refused.stderr and IN_FILE not in refused.stderr
    assert "typed-in-file" in {r["id"] for r in json.loads(invoke("secret", "list", "--json").stdout)}
    unknown = invoke("secret", "retire", "no-such-id")
    assert unknown.exit_code == ExitCode.BAD_INPUT and "no-such-id" in unknown.stderr


def test_an_empty_vault_lists_nothing(invoke) -> None:
    listed = invoke("secret", "list", "--json")
    assert listed.exit_code == 0 and json.loads(listed.stdout) == []
    plain = invoke("secret", "list")
    assert plain.exit_code == 0 and "holds no secret" in plain.stderr
