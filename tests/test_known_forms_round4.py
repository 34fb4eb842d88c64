"""Issue 47 §1/§5, round 4: a known value must not come through in an encoded or transformed form, by
class and in spellings of our own (not the red team's): base32 and base32hex (any case, inside a longer
stream, wrapped), quoted-printable, reversed, rot13, compressed then base64 or hex, case and full-width
letters, characters spread apart, bit and decimal dumps. Each class is read by export redaction and the
leak gate (files), by exec masking (a child's output) and by the child-environment scrub. Controls:
ordinary text in the same shapes gets no new redaction, and ordinary output passes unchanged."""

from __future__ import annotations

import base64
import bz2
import codecs
import gzip
import lzma
import os
import quopri
import subprocess
import textwrap
import zlib
from pathlib import Path

import pytest
from planted import PROSE as PLANTED_PROSE
from planted import generate, known_values
from test_redact_prose import PROSE

from muninn.guards.gate.leak_gate import KNOWN_VALUE, LeakGate
from muninn.guards.known.forms import ENCODINGS
from muninn.guards.redact.mask import mask_bytes, masking_redactor
from muninn.guards.redact.redactor import Redactor
from muninn.plugins.access.injection import Injection, child_env

ROOT = Path(__file__).resolve().parents[1]
VALUES = {"Quill-Marten-4471zk": "quill", "h7RtYp2WcK9sLm3Vbq": "tok", "N#4v!pQz8&Lw2e": "punct"}


def _b32_wrapped(data: bytes, width: int) -> str:
    return "\n".join(textwrap.wrap(base64.b32encode(data).decode(), width))


def _b64(data: bytes, width: int = 0) -> str:
    enc = base64.b64encode(data).decode()
    return "\n".join(textwrap.wrap(enc, width)) if width else enc


def _rot13(v: str) -> str:
    return codecs.encode(v, "rot13")


def _fullwidth(v: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in v)


# class -> spelling -> how a value is written in a file's text (bytes in, text out)
CLASSES: dict[str, dict[str, object]] = {
    "base32": {
        "alone": lambda v: base64.b32encode(v.encode()).decode(),
        "inside a stream": lambda v: base64.b32encode(b"user=ops;pass=" + v.encode() + b";end").decode(),
        "lower case": lambda v: base64.b32encode(b"k:" + v.encode()).decode().lower(),
        "base32hex": lambda v: base64.b32hexencode(v.encode()).decode(),
        "wrapped at 76": lambda v: _b32_wrapped(b"header line for the wrap test " + v.encode() * 2, 76),
        "wrapped at 20": lambda v: _b32_wrapped(v.encode(), 20),
    },
    "quoted-printable": {
        "every byte": lambda v: "".join(f"={b:02X}" for b in v.encode()),
        "every byte, lower hex": lambda v: "".join(f"={b:02x}" for b in v.encode()),
        "as quopri writes it": lambda v: quopri.encodestring(f"token {v}".encode(), quotetabs=True).decode(),
    },
    "reversed": {
        "alone": lambda v: v[::-1],
        "spaced": lambda v: " ".join(v[::-1]),
        "upper-cased": lambda v: v[::-1].upper(),
        "in a sentence": lambda v: f"the key, backwards, is {v[::-1]} (do not tell)",
    },
    "rot13": {
        "alone": _rot13,
        "upper-cased": lambda v: _rot13(v).upper(),
        "zero-width inside": lambda v: "\u200b".join(_rot13(v)),
    },
    "compressed": {
        "gzip then base64": lambda v: _b64(gzip.compress(f"cfg\ntoken={v}\n".encode(), mtime=0)),
        "gzip then base64, wrapped": lambda v: _b64(gzip.compress(v.encode() * 40, mtime=0) + b"", 76),
        "zlib then base64": lambda v: _b64(zlib.compress(v.encode())),
        "bzip2 then base64": lambda v: _b64(bz2.compress(v.encode())),
        "xz then base64": lambda v: _b64(lzma.compress(v.encode())),
        "gzip then hex": lambda v: gzip.compress(v.encode(), mtime=0).hex(),
    },
    "case and compatibility": {
        "upper": lambda v: v.upper(),
        "lower": lambda v: v.lower(),
        "full-width": _fullwidth,
        "spread by dots": lambda v: ".".join(v),
    },
}
CASES = [(cls, name) for cls, spellings in CLASSES.items() for name in spellings]


def _text(cls: str, name: str, value: str) -> str:
    return f"# Note\nsee\n{CLASSES[cls][name](value)}\nfor details\n"    # type: ignore[operator]


@pytest.fixture(scope="module")
def export() -> Redactor:
    return Redactor(VALUES, patterns=True, encodings=ENCODINGS, views=True)


@pytest.fixture(scope="module")
def gate() -> LeakGate:
    return LeakGate(VALUES)


@pytest.fixture(scope="module")
def masker() -> Redactor:
    return masking_redactor(VALUES)


def _shows(text: str, value: str) -> bool:
    """Whether the value survives in `text` in the spelling the case wrote it (its core, 8 characters)."""
    return value[3:11] in text or value[3:11].lower() in text.lower()


@pytest.mark.parametrize(("cls", "name"), CASES)
@pytest.mark.parametrize("value", list(VALUES))
def test_export_redacts_every_class(export: Redactor, cls: str, name: str, value: str) -> None:
    text = _text(cls, name, value)
    out = export.redact(text)
    assert VALUES[value] in out.secret_ids, (cls, name, out.text)


@pytest.mark.parametrize(("cls", "name"), CASES)
@pytest.mark.parametrize("value", list(VALUES))
def test_the_gate_finds_every_class(gate: LeakGate, cls: str, name: str, value: str) -> None:
    found = {f.secret_id for f in gate.scan(_text(cls, name, value)) if f.reason == KNOWN_VALUE}
    assert VALUES[value] in found, (cls, name)


@pytest.mark.parametrize(("cls", "name"), CASES)
@pytest.mark.parametrize("value", list(VALUES))
def test_exec_masking_hides_every_class(masker: Redactor, cls: str, name: str, value: str) -> None:
    text = _text(cls, name, value)
    out = mask_bytes(masker, [text.encode()[i:i + 7] for i in range(0, len(text.encode()), 7)]).decode()
    assert f"[REDACTED:{VALUES[value]}]" in out, (cls, name, out)


DUMPS = {   # a dump tool's command line, fed the value (and a newline) on stdin
    "xxd -b": ["xxd", "-b"], "xxd -b -c 4": ["xxd", "-b", "-c", "4"], "od -td1": ["od", "-td1"],
    "od -An -tu1": ["od", "-An", "-tu1"], "od -b": ["od", "-b"], "od -Ad -to1": ["od", "-Ad", "-to1"],
}


def _dump(argv: list[str], data: bytes) -> str:
    return subprocess.run(argv, input=data, capture_output=True, check=True, timeout=30).stdout.decode()


@pytest.mark.parametrize("tool", sorted(DUMPS))
@pytest.mark.parametrize("value", list(VALUES))
def test_bit_and_decimal_dumps_are_masked_and_redacted(masker: Redactor, export: Redactor, tool: str,
                                                        value: str) -> None:
    dumped = _dump(DUMPS[tool], (value + "\n").encode())
    assert f"[REDACTED:{VALUES[value]}]" in mask_bytes(masker, [dumped.encode()]).decode(), tool
    assert VALUES[value] in export.redact(dumped).secret_ids, tool


# --- the child's environment ---

def _env(extra: dict[str, str]) -> dict[str, str]:
    return child_env({"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **extra},
                     Injection({}, masking_redactor(VALUES)))


V = "h7RtYp2WcK9sLm3Vbq"
ENV_DROPPED = {
    "split in two": {"PART_A": V[:9], "PART_B": V[9:]},
    "split unevenly, names in the other order": {"Z_HEAD": V[:5], "A_TAIL": V[5:]},
    "reversed": {"CACHE_SEED": V[::-1]},
    "base32 lower case": {"SEED": base64.b32encode(V.encode()).decode().lower()},
    "base32hex": {"SEED": base64.b32hexencode(V.encode()).decode()},
    "lower-cased": {"SEED": V.lower()},
    "rot13": {"SEED": _rot13(V)},
    "full-width": {"SEED": _fullwidth(V)},
    "spaced": {"SEED": " ".join(V)},
    "gzip then base64": {"SEED": _b64(gzip.compress(V.encode(), mtime=0))},
    "every byte quoted-printable": {"SEED": "".join(f"={b:02X}" for b in V.encode())},
}


@pytest.mark.parametrize("case", sorted(ENV_DROPPED))
def test_a_variable_holding_a_known_value_in_any_form_is_dropped(case: str) -> None:
    extra = ENV_DROPPED[case]
    env = _env(extra)
    assert not set(extra) & set(env), case
    assert env["PATH"] == "/usr/bin:/bin" and env["LANG"] == "C.UTF-8"


def test_muninn_passphrase_under_any_name_and_password_named_variables_are_held_back() -> None:
    phrase = "copper kettle midnight orchard"
    env = _env({"MUNINN_PASSPHRASE": phrase, "COPY_OF_IT": phrase.upper(), "ELSEWHERE": phrase[::-1],
                "DB_PASSWORD": "hunter22x", "PGPASSWORD": "x", "ARCHIVE_PASSPHRASE": "something long enough"})
    assert not {"MUNINN_PASSPHRASE", "COPY_OF_IT", "ELSEWHERE", "DB_PASSWORD", "PGPASSWORD",
                "ARCHIVE_PASSPHRASE"} & set(env), sorted(env)


def test_ordinary_variables_reach_the_child_unchanged() -> None:
    extra = {**{k: v for k, v in os.environ.items() if "PASS" not in k.upper()},
             "PASSWORD_STORE_DIR": "/home/me/.password-store", "HEAD_OF_IT": V[:4], "TAIL_OF_IT": "q",
             "GREETING": "hello world", "JOBS": "4", "EDITOR": "vim", "TZ": "UTC"}
    assert _env(extra) == {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **extra}


# --- controls: ordinary text gets no redaction of a value, ordinary output passes unchanged ---

def _ordinary() -> list[tuple[str, str]]:
    files = sorted((ROOT / "docs").glob("*.md")) + sorted((ROOT / "examples/notes").rglob("*.md"))
    texts = [(str(p.relative_to(ROOT)), p.read_text()) for p in files]
    texts += [(f"prose {i}", t) for i, t in enumerate([*PROSE.values(), *PLANTED_PROSE])]
    texts += [("dumps of prose", _dump(["xxd", "-b"], b"restart the worker on app01\n")
               + _dump(["od", "-td1"], b"ordinary text here\n") + _b64(gzip.compress(b"ordinary text " * 20)))]
    return texts


@pytest.fixture(scope="module")
def many() -> dict[str, str]:
    """320 known values of every shape the planted set has, plus ours."""
    return {**known_values(generate()), **VALUES}


def test_ordinary_text_gets_no_value_redaction_nor_gate_finding(many: dict[str, str]) -> None:
    export, gate = Redactor(many, patterns=False, encodings=ENCODINGS, views=True), LeakGate(many, patterns=False)
    hits = [(name, h.rule, text[h.start:h.end]) for name, text in _ordinary() for h in export.redact(text).hits]
    found = [(name, f.line, f.secret_id) for name, text in _ordinary() for f in gate.scan(text)]
    assert hits == [] and found == []


def test_ordinary_output_passes_exec_masking_unchanged(many: dict[str, str]) -> None:
    masker = masking_redactor(many)
    changed = [name for name, text in _ordinary() if mask_bytes(masker, [text.encode()]) != text.encode()]
    assert changed == []
