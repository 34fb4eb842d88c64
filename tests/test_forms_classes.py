"""Issue 31 §5-7: the forms a declared value takes, by class (case tables: muninn/evals/lab/forms_cases.py).

Each class runs over random ASCII values and values that are not ASCII; dumps are printed by the real
xxd, hexdump and od. A case is hidden when the export redactor's output holds no known value in any
form the leak gate reads, and flagged when the gate finds it in the input.
"""

from __future__ import annotations

import base64
import json
import random
import shutil
import subprocess

from muninn.evals.lab import forms_cases
from muninn.evals.lab.bench_security_forms import hidden
from muninn.evals.lab.forms_cases import Case
from muninn.guards.gate.leak_gate import LeakGate
from muninn.guards.known import forms
from muninn.guards.known.dumps import byte_runs
from muninn.guards.known.retired import Ledger
from muninn.guards.redact.mask import mask_bytes, masking_redactor
from muninn.guards.redact.redactor import ENCODINGS, Redactor

VALUES = forms_cases.values(n_ascii=4)


def _misses(cases: list[Case]) -> list[str]:
    known = {v: f"f{i:03d}" for i, v in enumerate(dict.fromkeys(c.value for c in cases))}
    redactor = Redactor(known, patterns=False, encodings=ENCODINGS, views=True)
    gate = LeakGate(known, patterns=False)
    return [f"{c.name}: {c.text[:80]!r}" for c in cases
            if not hidden(redactor, gate, c) or not gate.scan(c.text)]


def test_every_dump_layout_of_the_real_tools() -> None:
    assert shutil.which("xxd") and shutil.which("hexdump") and shutil.which("od")
    cases = list(forms_cases.dump_cases(VALUES))
    assert len(cases) == 14 * len(VALUES) * 3 * 5
    assert _misses(cases) == []


def _design_limit(case: Case) -> bool:
    """The two documented limits of forms.base85_forms / forms_of: base85 and ascii85 without `<~ ~>`
    are needles of the UTF-8 bytes only (UTF-16 is read from decoded base64, hex and `<~…~>` blobs),
    and a value whose bytes fill fewer than two whole 4-byte blocks (or 8 base64 characters) at its
    offset inside a longer stream is found only where it is encoded alone."""
    encoder = case.name.split()[0]
    undelimited = encoder in ("base85", "ascii85") and "adobe" not in case.name
    short_inside = encoder in ("base85", "ascii85", "base64") and len(case.value.encode()) < 12 \
        and not case.name.endswith("+0")
    return (undelimited and "utf-16" in case.name) or short_inside


def test_every_encoding_and_byte_spelling() -> None:
    cases = list(forms_cases.encoding_cases(VALUES))
    kept = [c for c in cases if not _design_limit(c)]
    assert len(kept) > 0.8 * len(cases)
    assert _misses(kept) == []


def test_terminal_codes_at_every_position() -> None:
    cases = list(forms_cases.terminal_cases(dict(list(VALUES.items())[::3])))
    assert len(cases) > 2000
    assert _misses(cases) == []


def test_markup_that_hides_characters_at_every_position() -> None:
    assert _misses(list(forms_cases.markup_cases(VALUES))) == []


def test_case_folding_and_transliteration() -> None:
    cases = list(forms_cases.case_cases(VALUES))
    assert len({c.name.split(",")[0] for c in cases if "->" in c.name}) == 37   # letter -> spelling pairs
    assert _misses(cases) == []


def test_every_lookalike_pair_in_both_directions() -> None:
    cases = list(forms_cases.lookalike_cases())
    assert len(cases) > 2500
    assert _misses(cases) == []


def test_json_writers_are_masked_in_a_stream_and_hidden_at_export() -> None:
    cases = list(forms_cases.json_writer_cases())
    assert {c.name for c in cases} >= {"python ensure_ascii", "Go encoding/json", ".NET System.Text.Json"}
    assert _misses(cases) == []
    known = {v: f"j{i}" for i, v in enumerate(forms_cases.JSON_VALUES)}
    masker = masking_redactor(known)
    for case in cases:
        out = mask_bytes(masker, [case.text[:7].encode(), case.text[7:].encode()]).decode()
        assert f"[REDACTED:{known[case.value]}]" in out, (case.name, case.text)


# --- controls: ordinary text, and what each reader must not invent ---

ORDINARY = [
    "00000000: 2320 4865 6c6c 6f0a                      # Hello.",      # a dump of ordinary text
    "the colours are \x1b[01;31mred\x1b[m and ^[[32mgreen^[[m",
    "see [the manual](https://example.com/m) and <!-- todo --> <b>bold</b>",
    "bytes = [1, 2, 3, 4, 5, 6, 7, 8] and {0x01, 0x02, 0x03, 0x04, 0x05, 0x06}",
    "Ｆｕｌｌ width Straße, MÜNCHEN, Zürich, Пример текста, Ελληνικά",
    "I1l0O|oO0 Il1 O0 are just letters here",
]


def test_ordinary_text_with_these_codes_is_left_alone() -> None:
    known = {v: f"f{i}" for i, v in enumerate(VALUES)}
    redactor = Redactor(known, patterns=False, encodings=ENCODINGS, views=True)
    gate = LeakGate(known, patterns=False)
    for text in ORDINARY:
        assert redactor.redact(text).text == text
        assert gate.scan(text) == []


def test_a_dump_of_another_value_is_not_read_as_this_one() -> None:
    value = "Zq7#kP2xAb"
    near = "Zq7#kP2xAc"      # one byte apart
    redactor = Redactor({value: "v"}, patterns=False, encodings=ENCODINGS, views=True)
    out = subprocess.run(["xxd"], input=near.encode(), capture_output=True, check=True).stdout.decode()
    assert redactor.redact(out).text == out


def test_lookalikes_do_not_join_letters_that_differ() -> None:
    # The classes are I/l/1 and O/0 (Unicode's prototypes); `rn` is not `m`, `o` is not `0` in case.
    redactor = Redactor({"Kx9mQ2wPz7": "v", "Kx9oQ2wPz7": "w"}, patterns=False, encodings=ENCODINGS, views=True)
    assert redactor.redact("Kx9rnQ2wPz7").text == "Kx9rnQ2wPz7"
    assert redactor.redact("Kx9aQ2wPz7").text == "Kx9aQ2wPz7"
    assert forms.normalised_text("P0x") == forms.normalised_text("POx") == forms.normalised_text("P\u041ex")
    assert forms.normalised_text("o") != forms.normalised_text("0")


def test_dump_reader_keeps_where_each_byte_came_from() -> None:
    text = subprocess.run(["hexdump", "-C"], input=b"ab" + b"Zq7#kP2xAbcdefghij",
                          capture_output=True, check=True).stdout.decode()
    (run,) = [r for r in byte_runs(text) if b"Zq7#" in r.data and max(r.shown) >= 0]
    at = run.data.index(b"Zq7#")
    assert text[run.starts[at]:run.ends[at]] == "5a"
    assert text[run.shown[at]] == "Z"


# --- late-known values: MCP outputs and retired hashes ---

def test_mcp_outputs_hide_every_form_of_a_value_added_after_sync() -> None:
    from muninn.plugins.mcp.redaction import ValueRedactor

    value = "Lt9#Vq2mRx8w"
    scrub = ValueRedactor({value: "late"}).scrub
    copies = {"raw": value, "base64": base64.b64encode(value.encode()).decode(), "hex": value.encode().hex(),
              "upper": value.upper(), "split": f"**{value[:4]}**{value[4:]}", "url": "Lt9%23Vq2mRx8w",
              "json Go": json.dumps(value), "xxd": subprocess.run(["xxd"], input=value.encode(), capture_output=True,
                                                                 check=True).stdout.decode()}
    for name, copy in copies.items():
        out = scrub(f"note: {copy} end")
        assert "[REDACTED:late]" in out and not LeakGate({value: "late"}).scan(out), name


def test_retired_hashes_find_the_forms_of_a_rotated_value(tmp_path) -> None:
    rng = random.Random(7)
    ledger = Ledger(tmp_path / "retired.json")
    values = ["Lt9#Vq2mRx8w", "Пароль-Секрет-42", "correct horse battery staple"]
    ledger.remember((f"r{i}", v) for i, v in enumerate(values))
    scanner = ledger.retired([])
    assert len(scanner) == len(values)
    for i, value in enumerate(values):
        copies = [value, base64.b64encode(value.encode()).decode(), value.encode().hex(), json.dumps(value)[1:-1],
                  value.upper(), value.lower().replace(" ", "-"), "_".join(value)]
        for copy in copies:
            pad = "".join(rng.choice("abc ") for _ in range(5))
            text = f"{pad}\n{copy}\n{pad}"
            assert any(h.secret_id == f"r{i}" for h in scanner.scan(text)), copy
    assert scanner.scan("ordinary words, about rotating values and Пример текста") == []
    # A value still live is not retired, nor are its forms.
    assert len(ledger.retired(values).entries) == 0


def test_search_views_equal_the_mapped_views() -> None:
    # Searching reads `normalised_text`/`folded_text` (no offset map); a match is placed through
    # `normalise`/`folded`: the two must agree on every text, or a span would land in the wrong place.
    from planted import PROSE

    texts = [c.text for gen in (forms_cases.terminal_cases, forms_cases.markup_cases, forms_cases.case_cases,
                                forms_cases.encoding_cases) for c in gen(dict(list(VALUES.items())[::2]))]
    texts += [c.text for c in forms_cases.lookalike_cases()] + list(PROSE) + ORDINARY
    texts += ["ﬁx İstanbul ß ẞ ǅ ŉ", "&fjlig;&#7;%C3%9F\\u00DF", "Ǆ\u0301x", "x\u0308\u0308y ẞ%41"]
    for text in texts:
        for decode in (True, False):
            assert forms.normalised_text(text, decode) == forms.normalise(text, decode)[0], text
            assert forms.folded_text(text, decode) == forms.folded(text, decode)[0], text
