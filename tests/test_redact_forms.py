"""Issue 16 §2, text classes: every form of a known value in exported text is hidden (encoded,
shell-quoted, split by markup or invisible characters, wrapped, cut, overlapping another value),
pattern-only password forms on command lines and in prose (many languages), and ordinary prose
that must come out untouched."""

from __future__ import annotations

import json
import random
import shlex
import subprocess
import unicodedata

import pytest
from planted import PROSE

from muninn.evals.lab.security_cases import (
    FALSE_POSITIVES,
    OVERLAPS,
    PROSE_CASES,
    SHELL_CASES,
    SHELL_PRINTERS,
    SPLITS,
    VALUES,
    random_values,
)
from muninn.guards.gate.leak_gate import LeakGate
from muninn.guards.known import forms
from muninn.guards.redact.mask import mask_bytes, masking_redactor
from muninn.guards.redact.patterns import PatternScanner
from muninn.guards.redact.redactor import ENCODINGS, Redactor
from muninn.guards.rules import all_rules


@pytest.fixture(scope="module")
def export_redactor() -> Redactor:
    return Redactor(VALUES, patterns=True, encodings=ENCODINGS, views=True)


@pytest.fixture(scope="module")
def gate() -> LeakGate:
    return LeakGate(VALUES)


def _bash(script: str, value: str) -> str:
    return subprocess.run(["bash", "-c", script, "_", value], capture_output=True, text=True, check=True).stdout




@pytest.mark.parametrize("value", list(VALUES))
@pytest.mark.parametrize("printer", list(SHELL_PRINTERS))
def test_shell_quoted_forms_as_bash_prints_them(export_redactor: Redactor, gate: LeakGate, value: str,
                                                printer: str) -> None:
    printed = _bash(SHELL_PRINTERS[printer], value)
    out = export_redactor.redact(f"output:\n{printed}").text
    assert value not in out and f"[REDACTED:{VALUES[value]}]" in out, out
    assert gate.scan(printed), printed
    masked = mask_bytes(masking_redactor(VALUES), [printed.encode()]).decode()
    assert f"[REDACTED:{VALUES[value]}]" in masked, masked


@pytest.mark.parametrize("value", list(VALUES))
@pytest.mark.parametrize("encoding", [e for e in ENCODINGS if e != "raw"])
def test_every_form_of_the_table_is_hidden_by_export_and_seen_by_the_gate(
        export_redactor: Redactor, gate: LeakGate, value: str, encoding: str) -> None:
    needles = [f for f, enc in forms.forms_of(value, ENCODINGS).items() if enc == encoding]
    for needle in needles:
        text = f"prefix {needle} suffix"
        out = export_redactor.redact(text).text
        assert needle not in out, (encoding, out)
        assert gate.scan(text), (encoding, needle)


def test_python_quoting_forms_too(export_redactor: Redactor) -> None:
    for value in VALUES:
        for text in (shlex.quote(value), json.dumps({"k": value}), json.dumps(value, ensure_ascii=True)):
            assert value not in export_redactor.redact(text).text




@pytest.mark.parametrize("value", list(VALUES))
@pytest.mark.parametrize(("how", "split"), SPLITS, ids=[s[0] for s in SPLITS])
def test_split_values_are_hidden_and_mapped_back(export_redactor: Redactor, gate: LeakGate, value: str,
                                                 how: str, split) -> None:
    broken = split(value)
    text = f"Note: the value is {broken} (do not share)."
    out = export_redactor.redact(text)
    assert f"[REDACTED:{VALUES[value]}]" in out.text, (how, out.text)
    assert out.text.startswith("Note: the value is ") and out.text.endswith(" (do not share).")
    # The hit points at the original text, covering every visible piece of the value (read in the
    # view it was found in: an escape-like run a split broke stays literal).
    hit = next(h for h in out.hits if h.secret_id == VALUES[value])
    pieces = [forms.normalised(text[hit.start:hit.end], decode) for decode in (True, False)]
    assert any(needle in p for needle in forms.needle_views(value) for p in pieces if p), (how, pieces)
    assert gate.scan(text), how


@pytest.mark.parametrize(("how", "split"), SPLITS, ids=[s[0] for s in SPLITS])
def test_every_split_of_random_values_is_hidden_and_flagged(how: str, split) -> None:
    """The bench's own sample (200 values, seed 16): the claim is measured on it, so it is tested on it."""
    known = random_values(200, random.Random(16))
    redactor = Redactor(known, patterns=False, encodings=ENCODINGS, views=True)
    gate = LeakGate(known)
    missed = [value for value, secret_id in known.items()
              if f"[REDACTED:{secret_id}]" not in redactor.redact(f"the value {split(value)} here").text
              or not gate.scan(f"the value {split(value)} here")]
    assert missed == [], (how, missed)


# Every non-ASCII character whose compatibility form (NFKC) is printable ASCII: full-width, math
# alphanumerics, Roman numerals, circled and superscript digits...
COMPAT_ASCII = [c for c in map(chr, range(0x80, 0x30000))
                if len(n := unicodedata.normalize("NFKC", c)) == 1 and n.isascii() and n.isprintable()]


def test_a_compatibility_form_reads_as_its_ascii_character() -> None:
    """A split may write any character of a value in a compatibility form: the view must read it as
    the value holds it (the confusables table read full-width `Ｉ` as `l` and missed the value)."""
    wrong = [(c, f"U+{ord(c):04X}") for c in COMPAT_ASCII
             if forms.normalise(c)[0] != forms.normalise(unicodedata.normalize("NFKC", c))[0]]
    assert len(COMPAT_ASCII) > 900 and wrong == []


@pytest.mark.parametrize("value", [v for v in VALUES if not v.replace(" ", "").isalpha()])
def test_a_prefix_kept_by_a_cut_is_hidden(export_redactor: Redactor, value: str) -> None:
    for keep in range(6, len(value)):
        for tail in ("", "…", "...", "\nnext line", " …"):
            text = f"title: {value[:keep]}{tail}"
            out = export_redactor.redact(text).text
            assert value[:keep] not in out, (keep, tail, out)


def test_letters_only_words_are_not_taken_for_a_cut_phrase(export_redactor: Redactor) -> None:
    for text in ("that is correct", "correct horse", "Saddle the horse\nnext", "battery…"):
        assert export_redactor.redact(text).text == text




@pytest.mark.parametrize(("known", "text"), OVERLAPS)
@pytest.mark.parametrize("views", [False, True])
def test_overlapping_values_are_all_hidden(known: dict[str, str], text: str, views: bool) -> None:
    for redactor in (Redactor(known, patterns=False, views=views), masking_redactor(known)):
        out = redactor.redact(text).text
        for value in known:
            for i in range(len(value) - 2):
                assert value[i:i + 3] not in out, (value, out)
    found = {f.secret_id for f in LeakGate(known).scan(text)}
    assert found == set(known.values())


# --- pattern-only forms ---



@pytest.fixture(scope="module")
def rules_only() -> PatternScanner:
    return PatternScanner(rules=list(all_rules().values()), use_ds=False)


@pytest.mark.parametrize(("text", "secret"), SHELL_CASES + PROSE_CASES)
def test_pattern_only_password_forms(rules_only: PatternScanner, text: str, secret: str) -> None:
    found = [text[s.start:s.end] for s in rules_only.scan(text)]
    assert any(secret in f for f in found), found
    out = Redactor({}, patterns=True).redact(text).text
    assert secret not in out, out


@pytest.mark.parametrize("text", FALSE_POSITIVES + PROSE)
def test_new_rules_leave_ordinary_prose_alone(text: str) -> None:
    new = PatternScanner(rules=[all_rules()["shell-password"], all_rules()["prose-password"]], use_ds=False)
    assert new.scan(text) == [], text


def test_prose_with_every_view_on_is_untouched(export_redactor: Redactor) -> None:
    for text in PROSE + FALSE_POSITIVES:
        assert export_redactor.redact(text).text == Redactor({}, patterns=True).redact(text).text, text


@pytest.mark.parametrize(("escape", "renders"), [
    ("&#7;", ""), ("&#1;", ""), ("&#127;", ""), ("&#x0;", "\ufffd"), ("&#99999999;", "\ufffd"), ("&fjlig;", "fj"),
    ("&NotEqualTilde;", "\u2242\u0338"), ("\\u0000", "\0"), ("\\u{110000}", "\ufffd"), ("%00", "\0"),
    ("\\000", "\0")])
def test_an_escape_that_spells_no_character_or_several_is_read_not_crashed_on(
        export_redactor: Redactor, gate: LeakGate, escape: str, renders: str) -> None:
    """HTML drops `&#7;` (an empty string) and `&fjlig;` spells two characters: the view reads both
    (it crashed on them); a value with one inside that renders as nothing is the value."""
    text = f"note {escape} then Zq7{escape}#kP2x end"
    out = export_redactor.redact(text).text
    assert out.startswith(f"note {escape} then ") and out.endswith(" end"), out
    assert [c for c in forms.normalise(text)[0] if c in renders] == list(forms.normalise(renders * 2)[0])
    if forms.normalise(renders)[0] == "":
        assert "Zq7" not in out and gate.scan(text), out
    else:
        gate.scan(text)
