"""Redaction you can inspect and correct, through the CLI: `export --json` lists every redaction
(file, line, rule or secret id, a pattern hit's fingerprint) and never the value or the matched text;
`redact allow` takes a pattern hit's fingerprint and both the export and the leak gate honour it;
a comment in a note never switches redaction off; a known secret value is never allowlisted."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import planted
import pytest
import yaml
from typer.testing import CliRunner

from muninn.cli import app
from muninn.core import config
from muninn.export.sync_gate import SyncGate
from muninn.guards.gate.leak_gate import LeakGate
from muninn.guards.known.secret_values import collect
from muninn.guards.redact.allowlist import Allowlist, gate_allow

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
MARKER = re.compile(r"\[REDACTED:([^\]]+)\]")

# Pattern-only secrets (in no secrets file), one per rule class: what the owner sees reported.
PATTERN_ONLY = {
    "auth header": "curl -H 'Authorization: Bearer Xk29fLq0Zr7TnB4wPs8v' https://api.example.com",
    "github": "push with ghp_R8x2Lq9Zt4Vw7Yp1Bn6Mk3Hs5Jd0Fc2Gx8Qa today",
    "aws": "aws_access_key_id = AKIAQ7XK2M4N6P8R0T2V",
    "slack": "bot xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "url password": "psql postgres://app:Hq8-vR2pLm9xZ@db01.lab:5432/app",
    "labelled": "API key: Lw7Hq2Zp9Vx4Rk8Tn3Bm",
    "prose password": "the root password was Pk9Lz2Wq7Xr4 until Monday",
    "shell password": "sshpass -p 'Tz8Qw3Lp9Kx2' ssh root@nas",
    "jwt": "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJvcHMiLCJpYXQiOjE3MDAwMDAwMDB9.c2lnbmF0dXJlLXZhbHVlLXgyOQ",
    "private key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAr9Xq2vLr7Pz4Kw8Mn3Bd6FhQ\nZ7Lp2Wq9Xr4Tk8Vn3Bm6Hd\n"
                   "-----END RSA PRIVATE KEY-----",
}


def _run(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, args)
    code = getattr(result.exception, "exit_code", None) if result.exception else result.exit_code
    if result.exception is not None and code is None:
        raise result.exception
    return code, result.stdout, result.stderr


def _export(notes: Path, out: Path, secrets: Path | None = None) -> tuple[int, dict, str]:
    args = ["export", "notes", str(notes), "--out", str(out), "--json"]
    args += ["--secrets", str(secrets)] if secrets else []
    code, stdout, stderr = _run(args)
    return code, json.loads(stdout[: stdout.rindex("}") + 1]), stderr


@pytest.fixture
def corpus(tmp_path: Path) -> dict:
    secrets = planted.generate(n=36, seed=20)
    notes = tmp_path / "notes"
    planted.write_docs(secrets, notes)
    for i, (name, text) in enumerate(PATTERN_ONLY.items()):
        (notes / "patterns" / f"{i:02d}.md").parent.mkdir(parents=True, exist_ok=True)
        (notes / "patterns" / f"{i:02d}.md").write_text(f"# {name}\n\nSome context first.\n\n{text}\n")
    return {"notes": notes, "secrets": planted.write_secrets_yaml(secrets, tmp_path / "secrets.yaml"),
            "planted": secrets, "out": tmp_path / "out"}


def test_every_redaction_is_listed_at_its_line_with_its_name(corpus: dict) -> None:
    code, report, _ = _export(corpus["notes"], corpus["out"], corpus["secrets"])
    assert code in (0, 3), report
    entries = report["redactions"]
    on_disk = {}
    for path in corpus["out"].rglob("*.md"):
        rel = path.relative_to(corpus["out"]).as_posix()
        on_disk[rel] = [(i, m.group(1)) for i, line in enumerate(path.read_text().splitlines(), 1)
                        for m in MARKER.finditer(line)]
    listed: dict[str, list[tuple[int, str]]] = {}
    for e in entries:
        assert set(e) == {"file", "line", "kind", "rule", "secret_id", "fingerprint"}
        if e["kind"] == "value-in-path" or e["file"] not in on_disk:
            continue   # a path entry has no line; a dropped file is not on disk
        listed.setdefault(e["file"], []).append((e["line"], e["secret_id"] or e["rule"]))
    # Exactly the markers each written file holds, each at its own line and with its own name.
    assert {f: sorted(v) for f, v in listed.items()} == {f: sorted(v) for f, v in on_disk.items() if v}
    # Every class is there: known values by secret id, every pattern-only rule class by rule.
    ids = {e["secret_id"] for e in entries if e["kind"] == "value"}
    assert len(ids) >= 20 and ids <= {p.secret_id for p in corpus["planted"]}
    pattern_files = {e["file"] for e in entries if e["kind"] == "pattern" and e["file"].startswith("patterns/")}
    assert len(pattern_files) == len(PATTERN_ONLY)
    for e in entries:
        if e["kind"] == "pattern":
            assert re.fullmatch(re.escape(e["rule"]) + r":[0-9a-f]{24}", e["fingerprint"]), e
        else:
            assert e["fingerprint"] is None


def test_the_report_never_holds_a_value_or_a_matched_text(corpus: dict) -> None:
    code, report, stderr = _export(corpus["notes"], corpus["out"], corpus["secrets"])
    said = json.dumps(report) + stderr
    needles = [n for p in corpus["planted"] for n in p.needles]
    for text in PATTERN_ONLY.values():
        # The secret part of each pattern-only line: every run of 10+ token characters.
        needles += [t for t in re.findall(r"[A-Za-z0-9_\-.]{10,}", text) if any(c.isdigit() for c in t)]
    leaked = [n for n in needles if n in said]
    assert not leaked


def test_the_human_summary_names_each_pattern_hit_with_its_fingerprint(corpus: dict) -> None:
    code, stdout, stderr = _run(["export", "notes", str(corpus["notes"]), "--out", str(corpus["out"])])
    report_code, report, _ = _export(corpus["notes"], corpus["out"].with_name("out2"))
    shown = [e for e in report["redactions"] if e["kind"] == "pattern"][:20]
    for e in shown:
        assert f"{e['file']}:{e['line']}  {e['rule']}  {e['fingerprint']}" in stderr
    assert "muninn redact allow FINGERPRINT" in stderr


def _fingerprints(report: dict, file_prefix: str) -> list[str]:
    return sorted({e["fingerprint"] for e in report["redactions"]
                   if e["kind"] == "pattern" and e["file"].startswith(file_prefix)})


# A benign line the auth-header rule still matches: a documented test fixture, not a credential.
FIXTURE_LINE = "4. The staging smoke test logs in with token testab12cd34 (a documented fixture)."


def test_the_sample_runbook_false_positive_is_allowed_by_fingerprint(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    shutil.copytree(EXAMPLES / "notes", notes)
    with (notes / "runbooks" / "certificate-rotation.md").open("a") as f:
        f.write(f"\n{FIXTURE_LINE}\n")
    code, before, _ = _export(notes, tmp_path / "out", EXAMPLES / "secrets.yaml")
    assert code == 0
    rotation = tmp_path / "out" / "runbooks" / "certificate-rotation.md"
    assert "token [REDACTED:auth-header]" in rotation.read_text()
    # The runbook's own prose is not a hit: "token expired." is words, not a credential.
    assert "the DNS provider token expired." in rotation.read_text()
    (hit,) = [e for e in before["redactions"] if e["file"] == "runbooks/certificate-rotation.md"]
    assert hit["rule"] == "auth-header"
    assert "[REDACTED:auth-header]" in rotation.read_text().splitlines()[hit["line"] - 1]
    assert _run(["redact", "allow", hit["fingerprint"], "--note", "prose"])[0] == 0
    code, after, _ = _export(notes, tmp_path / "out", EXAMPLES / "secrets.yaml")
    assert code == 0 and after["dropped"] == []
    assert FIXTURE_LINE in rotation.read_text()
    assert not [e for e in after["redactions"] if e["file"] == "runbooks/certificate-rotation.md"]
    # The gates that read the tree later agree: sync's and the nightly one.
    s = config.load(None)
    SyncGate.from_settings(s).check([(tmp_path / "out", {p.relative_to(tmp_path / "out").as_posix(): p.read_bytes()
                                                         for p in (tmp_path / "out").rglob("*.md")})])
    gate = LeakGate(collect(s.paths.known_secret_files([EXAMPLES / "secrets.yaml"])),
                    allow=gate_allow(s.paths.redact_allowlist))
    assert gate.check_tree(tmp_path / "out", list((tmp_path / "out").rglob("*.md"))).clean
    listed = json.loads(_run(["redact", "list", "--json"])[1])["allowed"]
    assert [e["fingerprint"] for e in listed] == [hit["fingerprint"]] and listed[0]["note"] == "prose"


# False positives that both the redactor and the leak gate flag: after `redact allow`, the export
# writes them and its own gate (and the sync gate) let them through; without the entry the gate flags them.
BOTH_FLAG = {
    "bearer in docs": "Authorization: Bearer docs-example-2024",
    "labelled password in docs": "password: Winter2025Rotation",
    "api key placeholder": "API key = EXAMPLE0KEY0FOR0DOCS1",
}


@pytest.mark.parametrize("case", list(BOTH_FLAG))
def test_an_allowed_false_positive_passes_both_gates_and_the_control_does_not(tmp_path: Path, case: str) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    line = BOTH_FLAG[case]
    (notes / "doc.md").write_text(f"# Docs\n\nThe example reads: {line}\n")
    s = config.load(None)
    assert LeakGate({}).scan(line), "control: the gate flags it on its own"
    code, first, _ = _export(notes, tmp_path / "out")
    assert code == 0 and line not in (tmp_path / "out" / "doc.md").read_text()
    fps = _fingerprints(first, "doc.md")
    assert fps
    assert _run(["redact", "allow", *fps])[0] == 0
    code, again, _ = _export(notes, tmp_path / "out")
    assert code == 0, again["dropped"]
    assert line in (tmp_path / "out" / "doc.md").read_text()
    assert LeakGate({}, allow=gate_allow(s.paths.redact_allowlist)).scan(line) == []
    SyncGate.from_settings(s).check([(tmp_path / "out", {"doc.md": (tmp_path / "out" / "doc.md").read_bytes()})])
    # Allowing one text allows that text only: another value under the same rule is still redacted.
    other = line.replace("20", "31").replace("DOCS1", "DOCS7")
    (notes / "doc.md").write_text(f"# Docs\n\nThe example reads: {other}\n")
    _export(notes, tmp_path / "out")
    assert other not in (tmp_path / "out" / "doc.md").read_text()


# What an agent (or anyone who can write a note) might write to switch redaction off inline.
COMMENTS = [
    "# pragma: allowlist secret", "// pragma: allowlist secret", "<!-- pragma: allowlist secret -->",
    "pragma: allowlist nextline secret", "# gitleaks:allow", "gitleaks:allow", "# nosec", "# nosec B105",
    "# noqa", "# detect-secrets: ignore", "# trufflehog:ignore", "<!-- muninn:allow -->", "muninn: allow",
    "# redact: off", "[//]: # (allowlist secret)",
]
SECRETS_FOR_COMMENTS = {k: PATTERN_ONLY[k] for k in ("github", "aws", "auth header", "labelled", "shell password")}


@pytest.mark.parametrize("where", ["same line", "line above"])
@pytest.mark.parametrize("comment", COMMENTS)
def test_a_comment_in_a_note_never_switches_redaction_off(tmp_path: Path, comment: str, where: str) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    for i, text in enumerate(SECRETS_FOR_COMMENTS.values()):
        body = f"{text}  {comment}" if where == "same line" else f"{comment}\n{text}"
        (notes / f"{i}.md").write_text(f"# Note {i}\n\n{body}\n")
    code, report, _ = _export(notes, tmp_path / "out")
    assert code == 0
    for i, text in enumerate(SECRETS_FOR_COMMENTS.values()):
        written = (tmp_path / "out" / f"{i}.md").read_text()
        assert "[REDACTED:" in written, (comment, text)
        secret = max(re.findall(r"[A-Za-z0-9_\-]{10,}", text), key=len)
        assert secret not in written
    # The gate on its own (a file an agent wrote straight to the server) is not switched off either.
    gate = LeakGate({})
    for text in (PATTERN_ONLY["github"], PATTERN_ONLY["aws"]):
        assert gate.scan(f"{text}  {comment}") and gate.scan(f"{comment}\n{text}")


def test_a_fingerprint_written_into_a_note_allows_nothing(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text(f"# A\n\n{PATTERN_ONLY['github']}\n")
    _, first, _ = _export(notes, tmp_path / "out")
    (fp,) = _fingerprints(first, "a.md")
    for form in (fp, f"# muninn redact allow {fp}", f"allowlist: [{fp}]"):
        (notes / "a.md").write_text(f"# A\n\n{form}\n{PATTERN_ONLY['github']}  {form}\n")
        _export(notes, tmp_path / "out")
        assert "ghp_R8x2Lq9Zt4Vw7Yp1Bn6Mk3Hs5Jd0Fc2Gx8Qa" not in (tmp_path / "out" / "a.md").read_text()


def test_known_values_are_never_allowlisted(corpus: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from muninn.guards.redact.patterns import rule_names

    # The values are the owner's configured ones (what `redact allow` checks against).
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"export": {"secret_files": [str(corpus["secrets"])]}}))
    monkeypatch.setenv("MUNINN_CONFIG", str(cfg))
    code, report, _ = _export(corpus["notes"], corpus["out"])
    s = config.load(None)
    allowlist = Allowlist.load(s.paths.redact_allowlist)
    cases = corpus["planted"][:12]
    rules = ["auth-header", "labelled-secret", "ds:KeywordDetector", "ds:Base64HighEntropyString"]
    assert set(rules) <= set(rule_names())
    for p in cases:
        # The fingerprint such a value would have under any pattern rule: refused, exit 8, file unchanged.
        for rule in rules:
            code, _, _ = _run(["redact", "allow", allowlist.fingerprint(rule, p.value)])
            assert code == 8, (p.secret_id, rule)
        # A secret id is not a rule: refused by name.
        assert _run(["redact", "allow", f"{p.secret_id}:{'0' * 24}"])[0] == 8
    assert Allowlist.load(s.paths.redact_allowlist).entries == {}
    # Written straight into the file (past the CLI), a value's fingerprint still allows nothing:
    # the value pass never asks the allowlist, and the gate still flags a known value.
    for p in cases:
        for rule in rules:
            allowlist.add(allowlist.fingerprint(rule, p.value))
    allowlist.save()
    out2 = corpus["out"].with_name("out-forced")
    code, report, _ = _export(corpus["notes"], out2)
    text = "\n".join(f.read_text() for f in out2.rglob("*.md"))
    assert not [p.secret_id for p in cases if p.value in text]
    gate = LeakGate(collect([corpus["secrets"]]), allow=gate_allow(s.paths.redact_allowlist))
    assert all(gate.scan(f"note: {p.value}") for p in cases)


@pytest.mark.parametrize("bad", ["nope", "auth-header:12", "auth-header:" + "g" * 24, ":" + "a" * 24,
                                 "auth-header:" + "a" * 23, "auth-header:" + "A" * 24, ""])
def test_a_malformed_fingerprint_is_exit_2(tmp_path: Path, bad: str) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nnothing\n")
    _export(notes, tmp_path / "out")   # the allowlist gets its key
    code, _, _ = _run(["redact", "allow", bad])
    assert code == 2


def test_an_unknown_rule_is_refused(tmp_path: Path) -> None:
    assert _run(["redact", "allow", "no-such-rule:" + "a" * 24])[0] == 8


def test_a_damaged_allowlist_is_exit_2_naming_the_file(tmp_path: Path) -> None:
    s = config.load(None)
    s.paths.redact_allowlist.parent.mkdir(parents=True, exist_ok=True)
    for damage in ("{not json", '{"salt": "zz", "allowed": []}', '{"salt": "00", "allowed": []}', "[]"):
        s.paths.redact_allowlist.write_text(damage)
        code, _, _ = _run(["redact", "list"])
        assert code == 2, damage


def test_the_allowlist_file_is_private_and_holds_no_text(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nAuthorization: Bearer docs-example-2024\n")
    _, report, _ = _export(notes, tmp_path / "out")
    _run(["redact", "allow", *_fingerprints(report, "a.md")])
    path = config.load(None).paths.redact_allowlist
    assert path.stat().st_mode & 0o777 == 0o600
    assert "docs-example-2024" not in path.read_text()
    yaml.safe_load(path.read_text())


def _markers_on_disk(out: Path) -> dict[str, list[tuple[int, str]]]:
    found = {}
    for path in out.rglob("*.md"):
        rel = path.relative_to(out).as_posix()
        found[rel] = sorted((i, m.group(1)) for i, line in enumerate(path.read_text().splitlines(), 1)
                            for m in MARKER.finditer(line))
    return {f: v for f, v in found.items() if v}


def test_a_source_that_redacts_before_it_builds_facts_is_reported_too(tmp_path: Path) -> None:
    """Observations redact each call before JSON-encoding and cutting it, and a fact carries its
    neighbours' lines: every marker is still listed at its line, with a fingerprint, and allowing one
    lets that text through the export and its gate."""
    log = tmp_path / "obs.jsonl"
    rows = [{"ts": f"2025-01-01T00:0{i}:00Z", "tool": "bash", "input": cmd, "output": out}
            for i, (cmd, out) in enumerate([
                ("curl -H 'Authorization: Bearer Xk29fLq0Zr7TnB4wPs8v' https://x", "ok"),
                ("git push", "used ghp_R8x2Lq9Zt4Vw7Yp1Bn6Mk3Hs5Jd0Fc2Gx8Qa"),
                ("ls", "fine"), ("sshpass -p 'Tz8Qw3Lp9Kx2' ssh root@nas uptime", "up 3 days")])]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    code, stdout, _ = _run(["export", "observations", str(log), "--out", str(out), "--json"])
    report = json.loads(stdout)
    listed: dict[str, list[tuple[int, str]]] = {}
    for e in report["redactions"]:
        listed.setdefault(e["file"], []).append((e["line"], e["rule"]))
        assert e["kind"] == "pattern" and e["fingerprint"], e
    assert {f: sorted(v) for f, v in listed.items()} == _markers_on_disk(out)
    (auth,) = {e["fingerprint"] for e in report["redactions"] if e["rule"] == "auth-header"}
    assert _run(["redact", "allow", auth])[0] == 0
    code, stdout, _ = _run(["export", "observations", str(log), "--out", str(out), "--json"])
    assert code == 0 and json.loads(stdout)["dropped"] == []
    text = "\n".join(p.read_text() for p in out.rglob("*.md"))
    assert "Xk29fLq0Zr7TnB4wPs8v" in text
    assert "ghp_R8x2Lq9Zt4Vw7Yp1Bn6Mk3Hs5Jd0Fc2Gx8Qa" not in text and "Tz8Qw3Lp9Kx2" not in text


@pytest.mark.parametrize("quoted", ["[REDACTED:aws-key#7]", "[REDACTED:auth-header#0]", "[REDACTED:x#deadbeef.0]"])
def test_marker_text_quoted_in_a_note_is_neither_a_hit_nor_a_crash(tmp_path: Path, quoted: str) -> None:
    """A note that documents the marker format (muninn's own source does) beside a real secret: the
    report lists the real hit at its line and nothing for the quoted text."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "markers.md").write_text(f"# Markers\n\nThe report writes {quoted} for a hit.\n\n"
                                      "password: hunter2hunter2xyz\n")
    code, report, _ = _export(notes, tmp_path / "out")
    assert code == 0
    text = "\n".join(p.read_text() for p in (tmp_path / "out").rglob("*.md"))
    assert quoted in text and "hunter2hunter2xyz" not in text
    real = [(n, name) for pairs in _markers_on_disk(tmp_path / "out").values() for n, name in pairs
            if f"[REDACTED:{name}]" != quoted]
    assert len(real) == 1
    assert [(e["line"], e["rule"]) for e in report["redactions"]] == real
