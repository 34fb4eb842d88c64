"""The owner's redaction allowlist is honoured by the MCP server's pattern pass (what an agent writes,
the audit log) exactly as by export: the text the owner allowed in an exported note is the text an
agent writes back and the audit log keeps. The same guarantees hold there as in the gates: only a
pattern hit's exact text under its rule is allowed, a known value never is (whatever the file says),
and nothing written in the text itself switches redaction off."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
import yaml

from muninn.core import config
from muninn.core.errors import ExitCode
from muninn.guards.redact.allowlist import Allowlist
from muninn.guards.redact.patterns import rule_names
from muninn.plugins.mcp import server
from muninn.plugins.mcp.redaction import ValueRedactor
from muninn.plugins.mcp.session import GuardSession

# Pattern hits an owner may judge harmless, one per rule class, with a different text the same rule
# matches (still redacted after the first is allowed).
FALSE_POSITIVES = {
    "fixture token in a runbook": ("2. The smoke test logs in with token testab12cd34 (a documented fixture).",
                                   "2. The smoke test logs in with token Zx81kQp2Lw (a documented fixture)."),
    "bearer in docs": ("The example reads: Authorization: Bearer docs-example-2024",
                       "The example reads: Authorization: Bearer docs-example-2031"),
    "labelled password": ("The example reads: password: Winter2025Rotation",
                          "The example reads: password: Winter2031Rotation"),
    "api key placeholder": ("The example reads: API key = EXAMPLE0KEY0FOR0DOCS1",
                            "The example reads: API key = EXAMPLE0KEY0FOR0DOCS7"),
    "github token in a fixture": ("fixture uses ghp_R8x2Lq9Zt4Vw7Yp1Bn6Mk3Hs5Jd0Fc2Gx8Qa",
                                  "fixture uses ghp_R8x2Lq9Zt4Vw7Yp1Bn6Mk3Hs5Jd0Fc2Gx8Qb"),
    "aws example key": ("aws_access_key_id = AKIAQ7XK2M4N6P8R0T2V",
                        "aws_access_key_id = AKIAQ7XK2M4N6P8R0T2W"),
}
KNOWN = {"Lw7Hq2Zp9Vx4Rk8Tn3Bm": "ci-deploy-token", "Pk9Lz2Wq7Xr4Ty6Uv": "db-root-password"}
# Where a known value sits so that a pattern would match it too (and a fingerprint could name it).
KNOWN_CONTEXTS = ["Authorization: Bearer {v}", "curl -H 'Authorization: token {v}'", "password: {v}",
                  "API key = {v}", "export DB_PASSWORD={v}", "sshpass -p '{v}' ssh root@nas", "{v}",
                  "b64 {b64}"]
# What an agent might write into a note to switch redaction off inline.
COMMENTS = [
    "# pragma: allowlist secret", "// pragma: allowlist secret", "<!-- pragma: allowlist secret -->",
    "pragma: allowlist nextline secret", "# gitleaks:allow", "# nosec", "# noqa", "# detect-secrets: ignore",
    "# trufflehog:ignore", "<!-- muninn:allow -->", "muninn: allow", "# redact: off", "[//]: # (allowlist secret)",
    "{fp}", "# muninn redact allow {fp}", "allowlist: [{fp}]", '{{"allowed": [{{"fingerprint": "{fp}"}}]}}',
]
NOT_ALLOWED = {"github": "push with ghp_Q7x2Lq9Zt4Vw7Yp1Bn6Mk3Hs5Jd0Fc2Gx8Zz today",
               "auth header": "curl -H 'Authorization: Bearer Xk29fLq0Zr7TnB4wPs8v' https://api.example.com",
               "aws": "aws_access_key_id = AKIAZ9XK2M4N6P8R0T2Q"}


def _use_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> config.Settings:
    secrets = tmp_path / "secrets.yaml"
    secrets.write_text(yaml.safe_dump([{"id": i, "value": v} for v, i in KNOWN.items()]))
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"export": {"secret_files": [str(secrets)]}}))
    monkeypatch.setenv("MUNINN_CONFIG", str(cfg))
    return config.load(None)


def _export(run_muninn, notes: Path, out: Path) -> dict:
    ended = run_muninn(["export", "notes", str(notes), "--out", str(out), "--json"])
    assert ended.exit_code == 0, ended.stderr
    return json.loads(ended.stdout)


def _allow_all_patterns(run_muninn, tmp_path: Path, lines: dict[str, str]) -> dict:
    """Each line in its own note, exported, and every pattern hit the export reports allowed through
    the CLI (`muninn redact allow`), as an owner does."""
    notes = tmp_path / "notes"
    notes.mkdir(exist_ok=True)
    for i, line in enumerate(lines.values()):
        (notes / f"n{i}.md").write_text(f"# Note {i}\n\n{line}\n")
    report = _export(run_muninn, notes, tmp_path / "out")
    fps = sorted({e["fingerprint"] for e in report["redactions"] if e["kind"] == "pattern"})
    ended = run_muninn(["redact", "allow", *fps])
    assert ended.exit_code == 0, ended.stderr
    return report


def _exported_line(out: Path, i: int) -> str:
    """The body line of note i as export wrote it (a one-line note: the file's last line)."""
    return (out / f"n{i}.md").read_text().rstrip("\n").splitlines()[-1]


@pytest.mark.parametrize("case", list(FALSE_POSITIVES))
def test_an_allowed_pattern_hit_reads_the_same_through_mcp_as_in_the_export(
        run_muninn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    settings = _use_secrets(tmp_path, monkeypatch)
    allowed, _ = FALSE_POSITIVES[case]
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "n0.md").write_text(f"# Note\n\n{allowed}\n")
    # Control: before the owner allows it, export and MCP both redact it, to the same text.
    report = _export(run_muninn, notes, tmp_path / "before")
    before = _exported_line(tmp_path / "before", 0)
    assert "[REDACTED:" in before
    assert ValueRedactor.from_settings(settings).scrub_all(allowed) == before
    fps = sorted({e["fingerprint"] for e in report["redactions"] if e["kind"] == "pattern"})
    assert fps and run_muninn(["redact", "allow", *fps]).exit_code == 0
    # After: the export writes it, and what an agent writes through MCP keeps it too.
    _export(run_muninn, notes, tmp_path / "after")
    assert _exported_line(tmp_path / "after", 0) == allowed
    assert ValueRedactor.from_settings(config.load(None)).scrub_all(allowed) == allowed


def test_an_allowed_text_does_not_allow_another_text_of_the_same_rule(
        run_muninn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _use_secrets(tmp_path, monkeypatch)
    report = _allow_all_patterns(run_muninn, tmp_path, {k: v[0] for k, v in FALSE_POSITIVES.items()})
    assert len({e["rule"] for e in report["redactions"]}) >= 4   # several rule classes, not one
    scrub = ValueRedactor.from_settings(config.load(None)).scrub_all
    for case, (allowed, other) in FALSE_POSITIVES.items():
        assert scrub(allowed) == allowed, case
        said = scrub(other)
        assert said != other and "[REDACTED:" in said, (case, said)
        # Both in one text: the allowed one stays, the other goes.
        both = scrub(f"{allowed}\n{other}")
        assert both.startswith(allowed + "\n") and "[REDACTED:" in both.split("\n", 1)[1], (case, both)


@pytest.mark.parametrize("context", KNOWN_CONTEXTS)
def test_a_known_value_is_redacted_whatever_fingerprint_the_file_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, context: str) -> None:
    """Every rule's fingerprint of every known value (and of its encoded forms) is written straight into
    the file, past `redact allow`'s refusal: the value is still redacted, on writes and on outputs."""
    settings = _use_secrets(tmp_path, monkeypatch)
    allowlist = Allowlist.load(settings.paths.redact_allowlist).keyed()
    for value in KNOWN:
        for text in (value, base64.b64encode(value.encode()).decode()):
            for rule in rule_names():
                allowlist.add(allowlist.fingerprint(rule, text))
    allowlist.save()
    redactor = ValueRedactor.from_settings(config.load(None))
    for value, secret_id in KNOWN.items():
        text = context.format(v=value, b64=base64.b64encode(value.encode()).decode())
        # Outputs get the raw form only (plugins/mcp/redaction.py); writes get every form.
        outs = [redactor.scrub_all(text)] + ([redactor.scrub(text)] if value in text else [])
        for out in outs:
            assert value not in out and f"[REDACTED:{secret_id}]" in out, (text, out)


@pytest.mark.parametrize("where", ["same line", "line above", "line below"])
@pytest.mark.parametrize("comment", COMMENTS)
def test_nothing_written_in_the_text_switches_redaction_off(
        run_muninn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, comment: str, where: str) -> None:
    """With an allowlist in force (for other texts), a comment, a pragma or the hit's own fingerprint
    written next to it in the text allows nothing."""
    _use_secrets(tmp_path, monkeypatch)
    _allow_all_patterns(run_muninn, tmp_path, {"prose": FALSE_POSITIVES["fixture token in a runbook"][0]})
    settings = config.load(None)
    allowlist = Allowlist.load(settings.paths.redact_allowlist)
    scrub = ValueRedactor.from_settings(settings).scrub_all
    for name, line in NOT_ALLOWED.items():
        rule, hit = _pattern_texts(line)[0]
        fp = allowlist.fingerprint(rule, hit)
        note = comment.format(fp=fp)
        text = {"same line": f"{line}  {note}", "line above": f"{note}\n{line}",
                "line below": f"{line}\n{note}"}[where]
        out = scrub(text)
        secret = max(re.findall(r"[A-Za-z0-9_\-]{10,}", line), key=len)
        assert secret not in out and "[REDACTED:" in out, (name, out)


def _pattern_texts(line: str) -> list[tuple[str, str]]:
    from muninn.guards.redact.patterns import PatternScanner

    return [(s.rule, line[s.start:s.end]) for s in PatternScanner().scan(line)]


def test_the_guarded_call_path_audits_the_allowed_text_as_written(
        run_muninn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raven_policy) -> None:
    """Through `server.call` (the path both transports use), with the session the server opens: the
    audit line keeps the allowed text, and still redacts a known value and another pattern hit."""
    _use_secrets(tmp_path, monkeypatch)
    allowed = FALSE_POSITIVES["bearer in docs"][0]
    _allow_all_patterns(run_muninn, tmp_path, {"docs": allowed})
    cfg = yaml.safe_load((tmp_path / "muninn.yaml").read_text())
    cfg["guard"] = {"policy": str(raven_policy(["recall_status"])), "audit_log": str(tmp_path / "audit.jsonl")}
    (tmp_path / "muninn.yaml").write_text(yaml.safe_dump(cfg))
    session = GuardSession.open(config.load(None), "raven")
    try:
        value = next(iter(KNOWN))
        text = f"{allowed}\nsecond: {NOT_ALLOWED['github']}\nthird: {value}"
        result = server.call(session, "recall_remember", {"text": text})   # not this reader's tool
        assert result.is_error
    finally:
        session.close()
    (line,) = [json.loads(x) for x in (tmp_path / "audit.jsonl").read_text().splitlines()]
    said = line["arguments"]["text"]
    assert said.startswith(allowed + "\n"), said
    assert "ghp_Q7x2" not in said and value not in said and f"[REDACTED:{KNOWN[value]}]" in said


@pytest.mark.parametrize("damage", ["{not json", '{"salt": "zz", "allowed": []}', "[]",
                                    '{"salt": "' + "ab" * 16 + '", "allowed": [{"fingerprint": "nope"}]}'])
def test_a_damaged_allowlist_stops_the_server_with_one_sentence(
        run_muninn, tmp_path: Path, raven_policy, damage: str) -> None:
    """Fail closed and say so: the server does not start with a guess at what the owner allowed."""
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"guard": {"policy": str(raven_policy(["recall_status"]))}}))
    path = config.load(cfg).paths.redact_allowlist
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(damage)
    ended = run_muninn(["--config", str(cfg), "mcp", "--profile", "raven"])
    assert ended.exit_code == ExitCode.BAD_INPUT, ended.stderr
    assert "allowlist" in ended.stderr and "Traceback" not in ended.stderr
    assert len(ended.stderr.strip().splitlines()) == 1, ended.stderr
