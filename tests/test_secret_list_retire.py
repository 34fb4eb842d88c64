"""`muninn secret list`, `secret retire ID` and `secret find '*'` through the installed entry point: the
list shows metadata only (id, kind, service, the inventory entries that use it, created and rotated
dates; never a value, `--json` too; `--all` the retired ones); retire keeps the value known, so export,
exec masking and the leak gates still redact it, while get, exec, show, access exec and verify refuse
the id (8); it keeps a salted hash for the server leak scan and comments out its YAML entry; a value
written in a secrets file is refused (8); an unknown id is bad input (2); a re-added id is live again
with the old value still redacted; a value sync replaced or removed stays redacted; a glob lists every
match."""

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
from muninn.nightly.server_scan import Scanner

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


def _ids(invoke, *flags: str) -> dict[str, list[str]]:
    """{id: [status or why of each row]} of `secret list --json` (`--all`: retired rows too)."""
    out: dict[str, list[str]] = {}
    for r in json.loads(invoke("secret", "list", "--json", *flags).stdout):
        out.setdefault(r["id"], []).append(r["why"] or r["status"])
    return out


def _one_sentence_refusal(result: Ended, secret_id: str) -> None:
    assert result.exit_code == ExitCode.REFUSED, (result.exit_code, result.stderr)
    first = result.stderr.strip().splitlines()[0]
    assert f"secret '{secret_id}' was retired on " in first and "can no longer be used" in first, result.stderr
    for value in (TOKEN, NEW, RESTIC, IN_FILE):
        assert value not in result.stdout + result.stderr


def test_retire_keeps_the_value_redacted_and_refuses_its_use(invoke, world: Path, tmp_path: Path) -> None:
    _fill(invoke)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "ops.md").write_text(f"# Ops\n\n## Grafana\n\nThe old admin token was {TOKEN} until today.\n")
    done = invoke("secret", "retire", "grafana-admin", "--json")
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout) == {"retired": "grafana-admin", "entry": str(world.parent / "secrets.yaml")}
    # Listed as retired with --all only; the plain list says how many it leaves out.
    assert _ids(invoke) == {"restic-b2-repo": ["live"], "typed-in-file": ["live"]}
    assert _ids(invoke, "--all")["grafana-admin"] == ["retired"]
    plain = invoke("secret", "list")
    assert "grafana-admin" not in plain.stdout and "1 retired value(s) not shown" in plain.stderr
    every = invoke("secret", "list", "--all")
    assert "grafana-admin" in every.stdout and "retired 20" in every.stdout and TOKEN not in every.stdout
    # Still a known value: every consumer of the one collector redacts it (export, leak gates, restore, MCP).
    settings = config.load(world)
    assert secret_values.known(settings).get(TOKEN) == "grafana-admin"
    exported = invoke("export", "notes", str(notes), "--out", str(tmp_path / "out"), "--json")
    assert exported.exit_code == 0, exported.stderr
    facts = "".join(p.read_text() for p in (tmp_path / "out").rglob("*.md"))
    assert "[REDACTED:grafana-admin]" in facts and TOKEN not in facts
    # Exec masking: another secret's command that prints it.
    masked = invoke("secret", "exec", "restic-b2-repo", "--", "bash", "-c", "cat " + str(notes / "ops.md"))
    assert masked.exit_code == 0 and "admin token was" in masked.stdout and TOKEN not in masked.stdout
    # Never usable again: get, exec, show, access exec, verify, a second retire: one sentence, exit 8.
    for argv in (("secret", "get", "grafana-admin"), ("secret", "exec", "grafana-admin", "--", "true"),
                 ("secret", "show", "grafana-admin"), ("access", "exec", "grafana", "--", "true"),
                 ("verify", "grafana-admin"), ("secret", "retire", "grafana-admin")):
        _one_sentence_refusal(invoke(*argv), "grafana-admin")
    # The server leak scan's salted hash is kept too, never the value.
    ledger = Ledger(settings.paths.retired_hashes)
    assert [h.secret_id for h in ledger.retired([]).scan(f"old note: password {TOKEN} here")] == ["grafana-admin"]
    assert TOKEN not in settings.paths.retired_hashes.read_text()
    # The server leak scan still reports it as a retired value (and a live one as known).
    found = Scanner(settings).scan("viking://resources/x.md", f"x {TOKEN} y {RESTIC}")
    assert sorted((f["reason"], f["secret_id"]) for f in found) == [("known-value", "restic-b2-repo"),
                                                                    ("retired-value", "grafana-admin")]
    # Its YAML entry is commented out, not lost; the next sync neither fails, brings it back nor forgets it.
    text = (world.parent / "secrets.yaml").read_text()
    assert "# retired " in text and "# - id: grafana-admin" in text and TOKEN not in text
    assert invoke("vault", "sync").exit_code == 0
    assert "grafana-admin" not in _ids(invoke) and _ids(invoke, "--all")["grafana-admin"] == ["retired"]
    assert secret_values.known(config.load(world)).get(TOKEN) == "grafana-admin"
    # The access log says who retired what, and each refused use, never the value.
    log = settings.paths.access_log.read_text()
    assert '"action": "retire"' in log and '"refused": "retired"' in log and TOKEN not in log


def test_a_retired_id_can_get_a_new_value_and_the_old_stays_redacted(invoke, world: Path) -> None:
    _fill(invoke)
    assert invoke("secret", "retire", "grafana-admin").exit_code == 0
    again = invoke("secret", "add", "grafana-admin", "--stdin", "--service", "grafana", stdin=NEW)
    assert again.exit_code == 0, again.stderr
    assert _ids(invoke)["grafana-admin"] == ["live"]
    assert _ids(invoke, "--all")["grafana-admin"] == ["live", "retired"]
    known = secret_values.known(config.load(world))
    assert known.get(NEW) == "grafana-admin" and known.get(TOKEN) == "grafana-admin"
    # The new value is usable; the old one is masked in its output.
    used = invoke("secret", "exec", "grafana-admin", "--", "bash", "-c", f'test -n "$GRAFANA_ADMIN" && echo {TOKEN}')
    assert used.exit_code == 0, used.stderr
    assert TOKEN not in used.stdout and "[REDACTED" in used.stdout
    assert invoke("secret", "show", "grafana-admin").exit_code == 0
    # Replacing it (--replace) keeps the replaced value as retired too.
    other = "Th1rd-Gr4fana-Vx9q2Wz"
    assert invoke("secret", "add", "grafana-admin", "--stdin", "--replace", stdin=other).exit_code == 0
    assert sorted(_ids(invoke, "--all")["grafana-admin"]) == ["live", "replaced", "retired"]
    known = secret_values.known(config.load(world))
    assert {known.get(v) for v in (TOKEN, NEW, other)} == {"grafana-admin"}


def test_sync_keeps_a_replaced_or_removed_value_redacted(invoke, world: Path) -> None:
    _fill(invoke)
    secrets = world.parent / "secrets.yaml"
    changed = "Ch4nged-In-F1le-Kw7r"
    secrets.write_text(secrets.read_text().replace(IN_FILE, changed))
    synced = invoke("vault", "sync")
    assert synced.exit_code == 0, synced.stderr
    assert "kept as retired" in synced.stderr
    assert _ids(invoke, "--all")["typed-in-file"] == ["live", "replaced"]
    known = secret_values.known(config.load(world))
    assert known.get(IN_FILE) == "typed-in-file" and known.get(changed) == "typed-in-file"
    # An entry deleted from the file: its value is retired, not forgotten.
    secrets.write_text("# my secrets' metadata\n" + "\n".join(
        line for line in secrets.read_text().splitlines()[4:]) + "\n")
    assert "typed-in-file" not in secrets.read_text()
    assert invoke("vault", "sync").exit_code == 0
    assert _ids(invoke, "--all")["typed-in-file"] == ["replaced", "removed"]
    known = secret_values.known(config.load(world))
    assert known.get(IN_FILE) == "typed-in-file" and known.get(changed) == "typed-in-file"
    _one_sentence_refusal(invoke("secret", "exec", "typed-in-file", "--", "true"), "typed-in-file")


def test_retire_refuses_a_value_written_in_a_file_and_an_unknown_id(invoke, world: Path) -> None:
    _fill(invoke)
    refused = invoke("secret", "retire", "typed-in-file")
    assert refused.exit_code == ExitCode.REFUSED
    assert "secrets.yaml" in refused.stderr and "secret load" in refused.stderr and IN_FILE not in refused.stderr
    assert "typed-in-file" in {r["id"] for r in json.loads(invoke("secret", "list", "--json").stdout)}
    unknown = invoke("secret", "retire", "no-such-id")
    assert unknown.exit_code == ExitCode.BAD_INPUT and "no-such-id" in unknown.stderr


def test_an_empty_vault_lists_nothing(invoke) -> None:
    listed = invoke("secret", "list", "--json")
    assert listed.exit_code == 0 and json.loads(listed.stdout) == []
    plain = invoke("secret", "list")
    assert plain.exit_code == 0 and "holds no secret" in plain.stderr
