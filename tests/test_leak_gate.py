"""The leak gate: independent of the redactor, flags known values and patterns, never prints values."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from planted import FORMS, PROSE, VALUE_ONLY_FORMS, generate, known_values, write_docs

from muninn.guards.gate import gate_undeclared, leak_gate
from muninn.guards.gate.leak_gate import KNOWN_VALUE, Finding, LeakGate, scan
from muninn.guards.redact.redactor import Redactor

PLANTED = generate(n=320, seed=23)
KNOWN = known_values(PLANTED)


@pytest.fixture(scope="module")
def gate() -> LeakGate:
    return LeakGate(KNOWN)


def test_gate_shares_no_code_with_the_redactor() -> None:
    tree = ast.parse(Path(leak_gate.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    # Issue 16: the table of forms (guards/known/forms.py) is shared on purpose by masker, redactor and gate;
    # the matching code (redact, patterns, rules) stays separate.
    # guards/gate/gate_undeclared.py is the gate's own reading of undeclared secrets, and imports nothing of muninn.
    imported -= {"muninn.guards.known.forms", "muninn.guards.gate"}
    assert not {m for m in imported if m.startswith("muninn.guards") or m.startswith("detect_secrets")}
    own = ast.parse(Path(gate_undeclared.__file__).read_text())
    assert not {n.module for n in ast.walk(own) if isinstance(n, ast.ImportFrom) and n.module
                and n.module.startswith(("muninn", "detect_secrets"))}
    assert not {a.name for n in ast.walk(own) if isinstance(n, ast.Import) for a in n.names
                if a.name.startswith("muninn")}


def test_every_planted_file_is_dropped_when_redaction_is_bypassed(gate: LeakGate, tmp_path: Path) -> None:
    paths = write_docs(PLANTED, tmp_path)
    report = gate.check_tree(tmp_path)
    assert report.scanned == len(PLANTED) and not report.clean
    by_path = {d.path: d for d in report.dropped}
    for p, path in zip(PLANTED, paths, strict=True):
        dropped = by_path[path.relative_to(tmp_path).as_posix()]
        assert Finding(KNOWN_VALUE, p.secret_id, _line_of(p.doc, p.value)) in dropped.findings, p.form


def test_redacted_files_pass_the_gate(gate: LeakGate, tmp_path: Path) -> None:
    redactor = Redactor(KNOWN)
    for i, p in enumerate(PLANTED):
        (tmp_path / f"{i:04d}.md").write_text(redactor.redact(p.doc).text)
    report = gate.check_tree(tmp_path)
    assert report.clean, report.to_json()["dropped"][:3]


def test_reports_never_hold_values(gate: LeakGate, tmp_path: Path) -> None:
    write_docs(PLANTED, tmp_path)
    report = gate.check_tree(tmp_path)
    dumped = json.dumps(report.to_json()) + repr(report) + "".join(d.reason for d in report.dropped)
    leaked = [p.form for p in PLANTED if any(n in dumped for n in p.needles)]
    assert not leaked
    # Pattern findings carry the rule name, never the matched text.
    assert all(f.secret_id is None for f in scan("token: Zx81kLmQ2pRt7uVw9YbC3dEf"))


@pytest.mark.parametrize("form", list(FORMS))
def test_patterns_alone_flag_unknown_secrets_where_they_can(form: str) -> None:
    """Without known values the gate still flags every form with a label, a prefix or a shape."""
    docs = [p for p in PLANTED if p.form == form]
    flagged = [bool(scan(p.doc)) for p in docs]
    if form in VALUE_ONLY_FORMS:
        # No label, no prefix: only the undeclared-secret reading can see one, by its shape alone.
        assert {f.reason for p in docs for f in scan(p.doc)} <= {gate_undeclared.RULE}
    else:
        assert all(flagged), form


@pytest.mark.parametrize(("payload", "should_flag"), [
    ("-----BEGIN OPENSSH PRIVATE KEY-----", True),
    ("id AKIAIOSFODNN7EXAMPLQ", True),
    ("ghp_" + "aB3" * 12, True),
    ("xoxb-1234567890-abcdefABCDEF", True),
    ("sk_live_" + "x1Y2" * 6, True),
    ("AIza" + "Sy0-" * 8 + "abc", True),
    ("eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl", True),
    ("mysql://root:hunter2@db/app", True),
    ("Authorization: Bearer abc123def456ghi", True),
    ("API key: Zx81kLmQ2pRt7uVw9YbC3dEf", True),
    ("| password | Qw3rtY8uI0pAs |", True),
    ("<password>Qw3rtY8uI0pAs</password>", True),
    ("<password>[REDACTED:labelled-secret]</password>", False),
    ("password: [REDACTED:vm-sudo]", False),
    ("Authorization: Bearer [REDACTED:auth-header]", False),
    ("postgres://app:[REDACTED:url-credentials]@db:5432/app", False),
    ("password: $DB_PASSWORD", False),
    ("token: <paste here>", False),
    ("password: see the vault entry", False),
    ("Bearer tokens expire after 24 hours", False),
    ("https://grafana.example.com/d/abc123/latency?orgId=1", False),
])
def test_gate_pattern_table(payload: str, should_flag: bool) -> None:
    assert bool(scan(payload)) is should_flag


@pytest.mark.parametrize("text", PROSE)
def test_prose_passes_the_gate(gate: LeakGate, text: str) -> None:
    assert gate.scan(text) == []


def test_line_numbers_and_fail_closed(gate: LeakGate, tmp_path: Path) -> None:
    p = PLANTED[0]
    doc = tmp_path / "note.md"
    doc.write_text("one\ntwo\n" + p.value + "\n")
    assert Finding(KNOWN_VALUE, p.secret_id, 3) in gate.check_file(doc)
    missing = tmp_path / "gone.md"
    report = gate.check_tree(tmp_path, files=[doc, missing])
    assert report.scanned == 2 and {d.path for d in report.dropped} == {"note.md", "gone.md"}
    assert report.dropped[1].findings[0].reason.startswith("unreadable")


def test_a_value_wrapped_over_lines_is_flagged_at_its_first_line(gate: LeakGate) -> None:
    p = PLANTED[0]
    v = p.value
    for eol in ("\n", "\r\n"):
        text = f"one\ntwo: {v[:5]}{eol}{v[5:9]}{eol}{eol}{v[9:]}\nthree\n"
        assert v not in text
        assert gate.scan(text) == [Finding(KNOWN_VALUE, p.secret_id, 2)], eol
    assert gate.scan(f"one\n{v[:5]}\nsomething else\n{v[5:]}\n") == []   # not adjacent: not the value
    # A value that holds line breaks itself is still found as it stands, beside a wrapped one.
    pem = "-----BEGIN-----\nabcDEF123ghiJKL456\n-----END-----"
    both = LeakGate({pem: "pem", v: p.secret_id}, patterns=False)
    assert both.scan(f"a\n{v[:5]}\n{v[5:]}\n{pem}\n") == [Finding(KNOWN_VALUE, p.secret_id, 2),
                                                        Finding(KNOWN_VALUE, "pem", 4)]


def test_bytes_that_are_not_utf8_are_still_scanned(gate: LeakGate, tmp_path: Path) -> None:
    p = PLANTED[5]
    f = tmp_path / "blob.bin"
    f.write_bytes(b"\xff\xfe garbage " + p.value.encode() + b" \x80\x81")
    assert any(x.secret_id == p.secret_id for x in gate.check_file(f))


def _line_of(doc: str, value: str) -> int:
    return doc[: doc.index(value)].count("\n") + 1


def test_length_changing_lowercase_is_still_scanned() -> None:
    assert [f.reason for f in scan("İİİ\nAPI key: Zx81kLmQ2pRt7uVw9YbC3dEf")] == ["assigned-secret"]
    assert scan("İİİ\nAPI key: Zx81kLmQ2pRt7uVw9YbC3dEf")[0].line == 2


def test_lone_surrogates_are_scanned(gate: LeakGate) -> None:
    p = PLANTED[1]
    text = (b"\xff\n").decode("utf-8", "surrogateescape") + p.value
    assert Finding(KNOWN_VALUE, p.secret_id, 2) in gate.scan(text)
