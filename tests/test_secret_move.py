"""`muninn secret move` through the installed entry point, on a real notes tree with the file keyring: a secret
`redact review` found in a note goes into the vault, the note gets `{{secret:ID}}` in its place, the original is
kept (0600) under the home, and nothing is rewritten without the owner's yes. The next export shows the
reference as `<vault secret ID>` and redacts nothing; the value is never printed."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
import yaml
from conftest import Ended

from muninn.core.errors import ExitCode

TOKEN = "glsa_Zk8pQ2xR7mN4vB6tY1cW3eH5jL9sD0fA_1a2b3c4d"
NOTE = f"# Grafana\n\nLogin as admin.\nexport GRAFANA_TOKEN={TOKEN}\nThen restart the dashboards.\n"
KNOWN = "Kn0wn-Restic-Pw-9Vk2Lq7Xz4"


@pytest.fixture
def world(tmp_path: Path, isolated_keyring: Path) -> dict:
    notes = tmp_path / "notes"
    (notes / "ops").mkdir(parents=True)
    (notes / "ops" / "grafana.md").write_text(NOTE)
    (notes / "backup.md").write_text(f"# Backups\n\nrestic repo password: {KNOWN}\n")
    (notes / "plain.md").write_text("# Plain\n\nNothing secret here, just words about dashboards.\n")
    secrets = tmp_path / "secrets.yaml"
    secrets.write_text("# my secrets' metadata\n")
    secrets.chmod(0o600)
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({
        "home": str(tmp_path / "home"), "vault": {"files": ["secrets.yaml"]},
        "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"},
        "sources": [{"kind": "notes", "path": str(notes), "area": "viking://resources/notes"}],
    }))
    return {"cfg": cfg, "notes": notes, "home": tmp_path / "home"}


@pytest.fixture
def muninn(world, run_muninn):
    def run(*argv: str, stdin: str | None = None) -> Ended:
        done = run_muninn(["--config", str(world["cfg"]), *argv], stdin)
        assert "Traceback" not in done.stderr
        assert TOKEN not in done.stdout + done.stderr and KNOWN not in done.stdout + done.stderr
        return done

    return run


def _review(muninn) -> list[dict]:
    assert muninn("export", "all").exit_code == 0
    return json.loads(muninn("redact", "review", "--json").stdout)["found"]


def _fingerprint(muninn) -> str:
    rows = _review(muninn)
    return next(r["fingerprint"] for r in rows if r["kind"] == "pattern" and r["file"].endswith("grafana.md"))


def test_a_pattern_hit_moves_into_the_vault_and_the_note_keeps_a_reference(world, muninn) -> None:
    fp = _fingerprint(muninn)
    moved = muninn("secret", "move", fp, "--id", "grafana-token", "--service", "grafana", "--yes", "--json")
    assert moved.exit_code == 0, moved.stderr
    note = world["notes"] / "ops" / "grafana.md"
    assert note.read_text() == NOTE.replace(TOKEN, "{{secret:grafana-token}}")
    [kept] = [Path(k) for k in json.loads(moved.stdout)["kept"]]
    assert kept.read_text() == NOTE and kept.stat().st_mode & 0o777 == 0o600
    assert kept.is_relative_to(world["home"] / "moved-notes")
    listed = json.loads(muninn("secret", "list", "--json").stdout)
    assert [r["id"] for r in listed] == ["grafana-token"] and listed[0]["service"] == "grafana"
    # The vault holds the value: exec injects it (and masks it).
    ran = muninn("secret", "exec", "grafana-token", "--", sys.executable, "-c",
                 "import os; print(len(os.environ['GRAFANA_TOKEN']))")
    assert ran.exit_code == 0 and ran.stdout.strip() == str(len(TOKEN))
    # The next export reads the reference as what it is: nothing to redact there.
    after = _review(muninn)
    assert not [r for r in after if r["file"].endswith("grafana.md")]
    fact = next((world["home"] / "exports").rglob("grafana.md")).read_text()
    assert "export GRAFANA_TOKEN=<vault secret grafana-token>" in fact and TOKEN not in fact


def test_nothing_is_rewritten_without_a_yes(world, muninn, monkeypatch) -> None:
    fp = _fingerprint(muninn)
    note = world["notes"] / "ops" / "grafana.md"
    piped = muninn("secret", "move", fp, "--id", "grafana-token")           # no terminal to ask, no --yes
    assert piped.exit_code == ExitCode.REFUSED and "--yes" in piped.stderr

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))
    declined = muninn("secret", "move", fp, "--id", "grafana-token")
    assert declined.exit_code == ExitCode.REFUSED and "no note was rewritten" in declined.stderr
    assert "line(s) 4" in declined.stderr and "{{secret:grafana-token}}" in declined.stderr
    assert note.read_text() == NOTE and not (world["home"] / "moved-notes").exists()
    assert json.loads(muninn("secret", "list", "--json").stdout) == []
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert muninn("secret", "move", fp, "--id", "grafana-token").exit_code == 0
    assert "{{secret:grafana-token}}" in note.read_text()


def test_a_known_value_is_replaced_by_its_id(world, muninn) -> None:
    assert muninn("secret", "add", "restic-repo", "--stdin", stdin=KNOWN + "\n").exit_code == 0
    assert any(r.get("secret_id") == "restic-repo" for r in _review(muninn))
    moved = muninn("secret", "move", "restic-repo", "--yes")
    assert moved.exit_code == 0, moved.stderr
    assert (world["notes"] / "backup.md").read_text() == "# Backups\n\nrestic repo password: {{secret:restic-repo}}\n"
    assert (world["notes"] / "plain.md").read_text().startswith("# Plain")


def test_an_unknown_fingerprint_is_bad_input(muninn) -> None:
    _review(muninn)
    done = muninn("secret", "move", "labelled-secret:000000000000000000000000", "--id", "x", "--yes")
    assert done.exit_code == ExitCode.BAD_INPUT and "redact review" in done.stderr
    assert muninn("secret", "move", _fingerprint(muninn), "--yes").exit_code == ExitCode.BAD_INPUT   # no --id
