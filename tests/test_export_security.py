"""Issue 16 §2, export classes: values in names and paths, declared values, .env parsing,
observations cut after redaction, notes that link out of their tree, and sync re-gating every file
against the export ledger."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from muninn.core import atomic
from muninn.export import pipeline
from muninn.export.sync import local_files
from muninn.export.sync_gate import EDITED, NOT_EXPORTED, UNVERIFIED, SyncGate, SyncRefused
from muninn.guards.gate.leak_gate import LeakGate
from muninn.guards.known import forms, secret_values
from muninn.guards.redact.redactor import Redactor

VALUE = "Zq7#kP2x"
SECRETS = {"short-random": VALUE, "mixed": "Rt5vW9xQ2m", "phrase": "correct horse battery staple"}


def _secrets(tmp_path: Path) -> Path:
    path = tmp_path / "secrets.yaml"
    path.write_text(yaml.safe_dump([{"id": k, "value": v} for k, v in SECRETS.items()]))
    return path


def _variants(value: str) -> list[str]:
    """Every case, slug and separator spelling of a value a file or folder name can hold."""
    words = [w for w in forms.fold(value) if w]
    base = "".join(words)
    return [value, value.lower(), value.upper(), base, "-".join([base[:3], base[3:]]), f"{base[:3]}_{base[3:]}",
            value.replace(" ", "-"), value.replace(" ", "_").upper(), value.replace("#", "-")]


def _no_variant(text: str) -> None:
    folded = forms.fold(text)
    for secret_id, value in SECRETS.items():
        assert forms.fold(value) not in folded, (secret_id, text[:200])


@pytest.mark.parametrize("value", list(SECRETS.values()))
@pytest.mark.parametrize("where", ["file name", "folder name", "heading", "front matter title"])
def test_a_value_in_a_name_or_heading_never_reaches_a_path_id_or_ledger(tmp_path: Path, value: str,
                                                                         where: str) -> None:
    notes = tmp_path / "notes"
    body = "Plain text about the rotation of the database credentials, nothing else.\n" * 3
    for i, variant in enumerate(_variants(value)):
        safe = variant.replace("/", "-")
        if where == "file name":
            path, text = notes / "runbooks" / f"{i}-{safe}.md", f"# Runbook {i}\n\n{body}"
        elif where == "folder name":
            path, text = notes / f"{safe}-{i}" / "readme.md", f"# Readme {i}\n\n{body}"
        elif where == "heading":
            path, text = notes / f"h{i}.md", f"# Intro {i}\n\n{body}\n## Rotate {variant} now\n\n{body}"
        else:
            path, text = notes / f"t{i}.md", f"---\ntitle: {json.dumps(variant)}\n---\n{body}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    out = tmp_path / "out"
    report = pipeline.run("notes", notes, out, [_secrets(tmp_path)])
    assert report.dropped == [] and report.written == report.facts > 0
    for f in out.rglob("*"):
        rel = f.relative_to(out).as_posix()
        _no_variant(rel)                       # file and folder names (the viking:// URI is made from them)
        if f.is_file():
            _no_variant(f.read_text())         # ids, breadcrumbs, source paths, the ledger
    gate = LeakGate(secret_values.collect([tmp_path / "secrets.yaml"]))
    assert gate.check_tree(out).clean


@pytest.mark.parametrize("variant", _variants(VALUE) + _variants("Rt5vW9xQ2m"))
def test_the_gate_reads_every_relative_path(tmp_path: Path, variant: str) -> None:
    gate = LeakGate(SECRETS_BY_VALUE)
    (tmp_path / "a").mkdir()
    clean_name = tmp_path / "a" / "fine.md"
    clean_name.write_text("nothing here\n")
    leaky = tmp_path / "a" / f"x-{variant.replace('/', '-')}.md"
    leaky.write_text("nothing here either\n")
    report = gate.check_tree(tmp_path)
    assert [d.path for d in report.dropped] == [leaky.relative_to(tmp_path).as_posix()]
    assert report.dropped[0].findings[0].reason == "known-value-in-path"


SECRETS_BY_VALUE = {v: k for k, v in SECRETS.items()}


@pytest.mark.parametrize(("path", "changed"), [
    ("notes/zq7-kp2x/rotation", True), ("ZQ7_KP2X.md", True), ("a/Zq7#kP2x#heading", True),
    ("runbooks/correct-horse-battery-staple.md", True), ("rt5vw9xq2m", True),
    ("runbooks/db-upgrade/rollback", False), ("incidents/2025-03-04-zq7", False), ("kp2x-notes", False),
])
def test_redact_path_catches_every_spelling_and_only_them(path: str, changed: bool) -> None:
    out = Redactor(SECRETS_BY_VALUE, patterns=False).redact_path(path)
    assert (out != path) is changed, out
    assert out.count("/") == path.count("/")
    _no_variant(out)


def test_every_rendered_field_is_redacted_neighbours_included(tmp_path: Path) -> None:
    """A child section carries its parents' text as context: a pattern-only secret there (no known
    value, so only the redactor's rules see it) must be redacted too."""
    notes = tmp_path / "notes"
    notes.mkdir()
    filler = "Plain words about the maintenance window and who to call.\n" * 8
    (notes / "db.md").write_text(f"# DB\n\nsshpass -p 'Hx7!pQ2zrt' ssh root@db01\n\n{filler}\n## Restore\n\n{filler}"
                                 f"\n## Verify\n\n{filler}")
    out = tmp_path / "out"
    pipeline.run("notes", notes, out)
    text = "\n".join(p.read_text() for p in out.rglob("*.md"))
    assert "Hx7!pQ2zrt" not in text and "[REDACTED:shell-password]" in text


# --- declared values ---

@pytest.mark.parametrize(("value", "kept"), [
    ("Zq7#kP2x", True), ("a1b2c3", True), ("482913", True), ("qZxWvK", True), ("Hunter2", True),
    ("correct horse battery staple", True), ("two words", True), ("db01.internal", True),
    ("summer", False), ("Bluefish", False), ("STAGING", False), ("kestrel", False), ("päßwörter", False),
    ("kP2x#", False), ("abc", False), ("", False), ("   ", False),
])
def test_declared_values_are_secret_unless_one_ordinary_word(tmp_path: Path, value: str, kept: bool) -> None:
    assert secret_values.is_declared_secret(value) is kept
    (tmp_path / "secrets.yaml").write_text(yaml.safe_dump([{"id": "x", "value": value},
                                                           {"id": "y", "parts": {"pw": value}}]))
    found = secret_values.collect([tmp_path / "secrets.yaml"])
    assert (value in found) is kept
    # The same value guessed from a .env keeps the secret-ish filter.
    (tmp_path / ".env").write_text(f"X={json.dumps(value)}\n")
    guessed = secret_values.is_secretish(value) and not secret_values.is_locator(value)
    assert (value in secret_values.collect([tmp_path / ".env"])) is guessed


def test_a_declared_phrase_is_matched_as_a_whole(tmp_path: Path) -> None:
    r = Redactor(secret_values.collect([_secrets(tmp_path)]), patterns=False, views=True)
    assert "battery staple" not in r.redact("use correct horse\n  battery staple here").text
    for text in ("that is correct", "a horse and a battery", "the staple diet"):
        assert r.redact(text).text == text


# --- .env parsing ---

@pytest.mark.parametrize(("line", "value"), [
    ('KEY="Vv9xQ2mZt1"  # rotated monthly', "Vv9xQ2mZt1"),
    ("KEY='Vv9xQ2mZt1' # comment", "Vv9xQ2mZt1"),
    ("export KEY=Vv9xQ2mZt1 # comment", "Vv9xQ2mZt1"),
    ('KEY="Vv9x#Q2mZt1"', "Vv9x#Q2mZt1"),
    ("KEY = Vv9xQ2mZt1", "Vv9xQ2mZt1"),
    ('KEY="line1Aa9\nline2Bb8"', "line1Aa9\nline2Bb8"),
    ("KEY=Xk9.pQ2mZ7.rT12", "Xk9.pQ2mZ7.rT12"),                 # dotted, not a host
    ("KEY=a8f3k2b9.x7q1zz.io", "a8f3k2b9.x7q1zz.io"),           # host-shaped, random labels
    ("KEY=https://hooks.slack.com/services/T0001/B0001/Xk9pQ2mZ7rT1vW3y", None),  # a secret in a URL path
])
def test_env_files_are_parsed_by_dotenv(tmp_path: Path, line: str, value: str | None) -> None:
    (tmp_path / ".env").write_text(line + "\n")
    found = secret_values.collect([tmp_path / ".env"])
    if value is None:
        assert len(found) == 1 and not any(v.startswith('"') for v in found)
    else:
        assert found == {value: "env:.env:KEY"}


@pytest.mark.parametrize("line", [
    "DB_HOST=db01.internal.example.com", "API=https://api2.example.com/v1", "MAIL=ops@example.com",
    "CACHE=10.0.3.4:6379", "DATA=/var/lib/app/data", "REGION=eu-west-1", "DEBUG=1", "EMPTY=", "NAME=payments",
])
def test_env_settings_that_are_addresses_stay_findable(tmp_path: Path, line: str) -> None:
    (tmp_path / ".env").write_text(line + "\n")
    assert secret_values.collect([tmp_path / ".env"]) == {}


# --- observations: redact, then JSON-encode and cut ---

@pytest.mark.parametrize("offset", range(60, 81))
def test_an_observation_title_cut_keeps_no_prefix(tmp_path: Path, offset: int) -> None:
    secret = "Rt5vW9xQ2mAbCdEfGh"
    command = "x" * offset + secret + " more words after it"
    log = tmp_path / "obs.jsonl"
    rows = [{"ts": "2025-01-01T00:00:00Z", "tool": "bash", "input": command, "output": "ok"},
            {"ts": "2025-01-01T00:00:01Z", "tool": "http", "input": {"auth": f'he said "{secret}"'},
             "output": {"body": "x" * (990 - offset) + secret}}]
    log.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    secrets = tmp_path / "s.yaml"
    secrets.write_text(yaml.safe_dump([{"id": "tok", "value": secret}]))
    out = tmp_path / "out"
    report = pipeline.run("observations", log, out, [secrets])
    assert report.dropped == [] and report.redacted == 2
    text = "\n".join(p.read_text() for p in out.rglob("*.md"))
    for k in range(4, len(secret) + 1):
        assert secret[:k] not in text, (offset, k)


# --- where notes sources may read ---

def test_notes_do_not_follow_symlinks_out_of_the_tree(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "secret.md").write_text("# Outside\n\nOUTSIDE-FILE-TEXT\n")
    (outside / "deep" / "more.md").write_text("# Deep\n\nOUTSIDE-DIR-TEXT\n")
    notes = tmp_path / "notes"
    (notes / "sub").mkdir(parents=True)
    (notes / "sub" / "inside.md").write_text("# Inside\n\nINSIDE-TEXT\n")
    os.symlink(outside / "secret.md", notes / "link.md")
    os.symlink(outside / "deep", notes / "linked-dir")
    os.symlink(outside, notes / "sub" / "up")
    os.symlink(notes / "sub" / "inside.md", notes / "alias.md")    # a link inside the tree is fine
    out = tmp_path / "out"
    report = pipeline.run("notes", notes, out)
    text = "\n".join(p.read_text() for p in out.rglob("*.md"))
    assert "INSIDE-TEXT" in text and "OUTSIDE" not in text
    assert "link.md" in report.skipped


def test_a_hard_link_is_exported_as_a_copy_would_be_through_redaction_and_the_gate(tmp_path: Path) -> None:
    """The documented decision (docs/security.md): a hard link is a copy to the tree; what it holds is gated."""
    outside = tmp_path / "outside.md"
    body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQAAACDq8nW0"
    outside.write_text(f"# Key\n\n-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----\n"
                       f"\nThe deploy token is {VALUE}.\n")
    notes = tmp_path / "notes"
    notes.mkdir()
    os.link(outside, notes / "linked.md")
    out = tmp_path / "out"
    report = pipeline.run("notes", notes, out, [_secrets(tmp_path)])
    text = "".join(p.read_text() for p in out.rglob("*.md"))
    assert report.facts == 1 and body not in text and VALUE not in text


LONG = " ".join(["The runbook step explains the restart of the worker and the checks after it."] * 8)


UNREADABLE = {
    "Latin-1 prose": "# Caf\xe9\n\nThe caf\xe9 router needs a reboot.\n".encode("latin-1"),
    "Windows-1252 quotes": b"# Quotes\n\n\x93smart quotes\x94 from an old editor\n",
    "UTF-16 with a BOM": "# Sixteen\n\nwritten by a Windows tool\n".encode("utf-16"),
    "binary (a PNG renamed)": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe",
    "a stray byte in UTF-8": b"# Almost\n\nfine but for one byte: " + b"\xc3\x28\n",
}


@pytest.mark.parametrize("name", sorted(UNREADABLE))
def test_one_unreadable_note_is_skipped_with_a_line_and_the_rest_exported(tmp_path: Path, name: str) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    for i in range(3):
        (notes / f"n{i}.md").write_text(f"# Note {i}\n\nRestart the worker on app0{i}.\n")
    (notes / "odd.md").write_bytes(UNREADABLE[name])
    report = pipeline.run("notes", notes, tmp_path / "out")
    assert report.facts == 3 and report.written == 3
    assert "odd.md" in report.skipped and "not UTF-8" in report.skipped["odd.md"]


def test_a_skipped_note_keeps_its_earlier_facts_and_syncs_them(tmp_path: Path) -> None:
    """Skipped is not deleted: the facts an earlier run wrote for it stay, in the ledger too, so sync
    neither refuses them nor prunes them; once the note is readable again it is exported as usual."""
    notes, out = tmp_path / "notes", tmp_path / "out"
    notes.mkdir()
    (notes / "keep.md").write_text(f"# Keep\n\n{LONG}\n\n## Detail\n\n{LONG}\n")
    (notes / "other.md").write_text("# Other\n\nUnrelated.\n")
    first = pipeline.run("notes", notes, out)
    before = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*.md")}
    assert first.facts == 3 and "keep/detail.md" in before
    (notes / "keep.md").write_bytes("# Keep\n\nThe NAS scrub runs on Sundays \u2014 caf\xe9\n".encode("latin-1",
                                                                                                        "replace"))
    (notes / "other.md").unlink()                     # a deleted note is still pruned
    second = pipeline.run("notes", notes, out)
    after = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*.md")}
    assert second.removed == 1 and "keep.md" in second.skipped
    assert after == {k: v for k, v in before.items() if not k.startswith("other")}
    gate = SyncGate.from_known({})
    assert gate.refused(out, local_files(out)) == []
    (notes / "keep.md").write_text("# Keep\n\nThe NAS scrub now runs on Saturdays.\n")
    third = pipeline.run("notes", notes, out)
    assert third.skipped == {} and "Saturdays" in "".join(p.read_text() for p in out.rglob("*.md"))


def test_the_cli_names_each_skipped_note_and_exits_0(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "fine.md").write_text("# Fine\n\nok\n")
    (notes / "latin.md").write_bytes("# L\n\ncaf\xe9\n".encode("latin-1"))
    done = subprocess.run([sys.executable, "-m", "muninn", "export", "notes", str(notes), "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, env={**os.environ, "MUNINN_HOME": str(tmp_path / "home")})
    assert done.returncode == 0, done.stderr
    assert "skipped latin.md: not UTF-8 text" in " ".join(done.stderr.split()), done.stderr


@pytest.mark.parametrize("where", ["the ledger", "a fact's file", "the ledger's folder", "a fact's folder"])
def test_a_symlink_planted_in_the_export_folder_is_never_written_through(tmp_path: Path, where: str) -> None:
    notes, out, outside = tmp_path / "notes", tmp_path / "out", tmp_path / "outside"
    notes.mkdir()
    outside.mkdir()
    (notes / "runbook.md").write_text(f"# Runbook\n\n{LONG}\n\n## Two\n\n{LONG}\n")
    pipeline.run("notes", notes, out)
    ledger = next(out.rglob(f"{pipeline.LEDGER_DIR}/*.json"))
    fact = out / "runbook.md"
    victim = outside / "victim"
    victim.write_text("untouched")
    target = {"the ledger": ledger, "a fact's file": fact, "the ledger's folder": ledger.parent,
              "a fact's folder": out / "runbook"}[where]
    shutil.rmtree(target) if target.is_dir() else target.unlink()
    target.symlink_to(victim if not where.endswith("folder") else outside)
    (notes / "runbook.md").write_text(f"# Runbook\n\nChanged. {LONG}\n\n## Two\n\nChanged. {LONG}\n")
    with pytest.raises(atomic.WriteFailed, match="symlink"):
        pipeline.run("notes", notes, out)
    assert victim.read_text() == "untouched" and sorted(p.name for p in outside.iterdir()) == ["victim"]


# --- sync re-gates every file ---

@pytest.fixture
def exported(tmp_path: Path) -> tuple[Path, SyncGate]:
    notes = tmp_path / "notes"
    notes.mkdir()
    for i in range(3):
        (notes / f"n{i}.md").write_text(f"# Note {i}\n\nRestart the worker on app0{i}.\n")
    out = tmp_path / "exports" / "notes"
    pipeline.run("notes", notes, out, [_secrets(tmp_path)])
    return out, SyncGate.from_known(secret_values.collect([tmp_path / "secrets.yaml"]))


def test_sync_gate_passes_what_export_wrote(exported: tuple[Path, SyncGate]) -> None:
    out, gate = exported
    assert gate.refused(out, local_files(out)) == []
    assert gate.refused(out.parent, local_files(out.parent)) == []   # the area folder above it


@pytest.mark.parametrize(("change", "reason"), [
    ("add", NOT_EXPORTED), ("add-leaky", "known-value"), ("add-leaky-name", "known-value-in-path"),
    ("edit", EDITED), ("edit-harmless", EDITED), ("append-value", "known-value"),
    ("old-ledger", UNVERIFIED),
])
def test_sync_gate_refuses_by_name(exported: tuple[Path, SyncGate], change: str, reason: str) -> None:
    out, gate = exported
    assert gate.refused(out, local_files(out)) == []   # found clean once: a change after that still counts
    first = sorted(out.rglob("n0*.md"))[0]
    name = first.relative_to(out).as_posix()
    if change == "add":
        name = "hand-written.md"
        (out / name).write_text("# by hand\n")
    elif change == "add-leaky":
        name = "hand.md"
        (out / name).write_text(f"# by hand\n\nthe value {VALUE}\n")
    elif change == "add-leaky-name":
        name = "zq7-kp2x.md"
        (out / name).write_text("# by hand\n")
    elif change == "edit":
        first.write_text(first.read_text().replace("Restart", "Reboot"))
    elif change == "edit-harmless":
        first.write_text(first.read_text() + "\n")
    elif change == "append-value":
        first.write_text(first.read_text() + "\nRt5vW9xQ2m\n")
    elif change == "old-ledger":
        ledger = next(out.glob(f"{pipeline.LEDGER_DIR}/*.json"))
        data = json.loads(ledger.read_text())
        ledger.write_text(json.dumps({**data, "files": sorted(data["files"])}))   # a list, no hashes
    refused = gate.refused(out, local_files(out))
    shown = "redacted.md" if change == "add-leaky-name" else name
    assert shown in [d.path for d in refused]
    assert any(f.reason == reason for d in refused for f in d.findings)
    with pytest.raises(SyncRefused) as err:
        gate.check([(out, local_files(out))])
    assert err.value.exit_code == 3 and shown in str(err.value)
    assert VALUE not in str(err.value) and "Rt5vW9xQ2m" not in str(err.value)


def test_the_same_bytes_are_gated_once_per_gate(exported: tuple[Path, SyncGate], monkeypatch) -> None:
    out, gate = exported
    scanned: list[int] = []
    real = gate.gate.scan
    monkeypatch.setattr(gate.gate, "scan", lambda text: scanned.append(1) or real(text))
    files = local_files(out)
    gate.check([(out, files)])               # `muninn sync` before it touches the server
    gate.check([(out, local_files(out))])    # and sync itself, with the same bytes
    assert len(scanned) == len(files) > 0
    # the same bytes under another name are another file: a value in the new name is still caught
    first = sorted(out.rglob("n0*.md"))[0]
    first.rename(first.with_name("zq7-kp2x.md"))
    with pytest.raises(SyncRefused, match="redacted.md"):
        gate.check([(out, local_files(out))])


def test_muninn_sync_refuses_with_exit_3_before_touching_the_server(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nFine text.\n")
    secrets = _secrets(tmp_path)
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"export": {"secret_files": [str(secrets)]},
                                   "server": {"port": 1}}))   # nothing listens: a refusal must come first
    out = tmp_path / "out"
    run = [sys.executable, "-m", "muninn", "--config", str(cfg)]
    assert subprocess.run([*run, "export", "notes", str(notes), "--out", str(out)], capture_output=True).returncode == 0
    (out / "planted.md").write_text(f"# planted\n\n{VALUE}\n")
    done = subprocess.run([*run, "sync", str(out), "--to", "viking://resources/notes"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 3, done.stderr
    assert "planted.md" in done.stderr and "Traceback" not in done.stderr and VALUE not in done.stderr


NAMED_SECRETS = {   # a file name holding a secret nobody declared: (name, the secret's pieces in any spelling)
    "spaced label": ("vpn password Pelican-Torch-6610.md", ("pelican", "6610")),
    "dashed label": ("wifi-passphrase-Garten7458+.md", ("garten7458",)),
    "underscored token": ("jira_token_Zq8uXy3Pa55w0rdTok9f8Q2m.md", ("zq8uxy3pa55w0rdtok9f8q2m",)),
}


@pytest.mark.parametrize("case", sorted(NAMED_SECRETS))
def test_a_secret_in_a_file_name_reaches_no_id_path_title_or_report(tmp_path: Path, case: str) -> None:
    """Issue 47 §2: the fact's id, source path, context line, file path (its URI) and the report."""
    name, pieces = NAMED_SECRETS[case]
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / name).write_text("# Access\n\nConnect through the office gateway, then check the tunnel.\n")
    out = tmp_path / "out"
    report = pipeline.run("notes", notes, out)
    shown = " ".join([*(p.relative_to(out).as_posix() for p in out.rglob("*")),
                      *(p.read_text() for p in out.rglob("*") if p.is_file()), json.dumps(report.as_json())]).lower()
    assert report.facts == 1
    for piece in pieces:
        assert piece not in shown.replace("-", "").replace("_", "").replace(" ", ""), (piece, shown[:400])
