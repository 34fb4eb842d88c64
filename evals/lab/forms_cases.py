"""The case tables of issue 31 §5-7 (the forms a declared value takes), built from each class, shared
by the tests (tests/test_forms_classes.py) and the measurement (`bench_security_forms`).

Each generator yields `Case(klass, name, value, text)`: `text` holds `value` in one form of the class.
Dumps come from the real tools where this machine has them (`TOOLS`, checked with `shutil.which`),
else from Python's own encoders; `tool_report()` says which.
"""

from __future__ import annotations

import base64
import binascii
import json
import random
import re
import shutil
import string
import subprocess
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from confusable_homoglyphs import confusables

from muninn.evals.lab.security_cases import random_values


@dataclass(frozen=True)
class Case:
    klass: str
    name: str
    value: str
    text: str


# Values the classes run over: random ASCII ones (the export bench's generator) and ones that are not
# ASCII: German, Cyrillic, Greek, Nordic, Polish/Spanish, CJK, an emoji.
NON_ASCII = ["Straße-Zq7#kP2x", "Пароль-Секрет-42", "Zürich-Kx9!mQ2w", "ΝΑΙ-κλειδί-77x", "Ærø-Fjord-8x#Q",
             "Łódź-Ñandú-5rT", "東京-Zq7-秘密9k", "k9🔑Zq7xP2w!"]


def values(n_ascii: int = 12) -> dict[str, str]:
    ascii_values = [v for v in random_values(n_ascii * 2, random.Random(31)) if " " not in v][:n_ascii]
    return {v: f"f{i:03d}" for i, v in enumerate([*ascii_values, *NON_ASCII])}


# --- dumps that tools print ---

DUMP_TOOLS = {
    "xxd": ["xxd"], "xxd -g1": ["xxd", "-g1"], "xxd -g4": ["xxd", "-g4"], "xxd -i": ["xxd", "-i"],
    "hexdump -C": ["hexdump", "-C"], "hexdump": ["hexdump"], "hexdump -x": ["hexdump", "-x"],
    "od -c": ["od", "-c"], "od -An -c": ["od", "-An", "-c"], "od -x": ["od", "-x"],
    "od -An -tx1": ["od", "-An", "-tx1"],
    "od -tx1": ["od", "-tx1"], "od -tx2": ["od", "-tx2"], "od -An -tx4": ["od", "-An", "-tx4"],
}
PREFIXES = [b"", b"x", b"ab", b"key=", b"the token for the staging db is "]
BYTE_ENCODINGS = ("utf-8", "utf-16-le", "utf-16-be")


def tool_report() -> dict[str, str]:
    """Which dump comes from which program on this machine."""
    out = {name: shutil.which(cmd[0]) or "missing" for name, cmd in DUMP_TOOLS.items()}
    out["uuencode"] = shutil.which("uuencode") or "missing: Python's binascii.b2a_uu"
    return out


def _run(cmd: list[str], data: bytes) -> str:
    return subprocess.run(cmd, input=data, capture_output=True, check=True).stdout.decode()


def dump_cases(vals: dict[str, str]) -> Iterator[Case]:
    """Each layout × value × UTF-8/UTF-16 LE/BE × 5 prefixes (the value at every byte alignment of a
    2- or 4-byte group, and on two lines)."""
    for name, cmd in DUMP_TOOLS.items():
        if not shutil.which(cmd[0]):
            continue
        for value in vals:
            for enc in BYTE_ENCODINGS:
                for prefix in PREFIXES:
                    data = prefix + value.encode(enc, "surrogatepass") + b"\n"
                    yield Case("dumps", f"{name} {enc} +{len(prefix)}", value, _run(cmd, data))


def _uu(data: bytes) -> str:
    if shutil.which("uuencode"):
        return subprocess.run(["uuencode", "secret.bin"], input=data, capture_output=True, check=True).stdout.decode()
    return "begin 644 secret.bin\n" + "".join(binascii.b2a_uu(data[i:i + 45]).decode()
                                               for i in range(0, len(data), 45)) + "`\nend\n"


ENCODERS = {
    "base85 (b85encode)": lambda d: base64.b85encode(d).decode(),
    "ascii85 (a85encode)": lambda d: base64.a85encode(d).decode(),
    "ascii85 <~ ~> (adobe)": lambda d: base64.a85encode(d, adobe=True).decode(),
    "ascii85 wrapped at 20": lambda d: base64.a85encode(d, wrapcol=20).decode(),
    "uuencode": _uu,
    "C byte array": lambda d: "{" + ", ".join(f"0x{b:02x}" for b in d) + "}",
    "C byte array, upper": lambda d: "{ " + ",".join(f"0x{b:02X}" for b in d) + " }",
    "\\x string (repr of bytes)": lambda d: repr(d),
    "\\x every byte": lambda d: '"' + "".join(f"\\x{b:02x}" for b in d) + '"',
    "octal C string": lambda d: '"' + "".join(f"\\{b:03o}" for b in d) + '"',
    "decimal array (list(bytes))": lambda d: str(list(d)),
    "signed byte[] (Java)": lambda d: "new byte[]{" + ", ".join(str(b - 256 if b > 127 else b) for b in d) + "}",
    "colon hex (openssl)": lambda d: ":".join(f"{b:02x}" for b in d),
    "spaced hex": lambda d: " ".join(f"{b:02X}" for b in d),
    "base64": lambda d: base64.b64encode(d).decode(),
    "hex": lambda d: d.hex(),
}


def encoding_cases(vals: dict[str, str]) -> Iterator[Case]:
    """Each encoder × value × UTF-8/UTF-16 LE/BE (and UTF-16 with its BOM) × 4 positions in a stream;
    code points (`U+XXXX`) once per value, as they name characters, not bytes."""
    for name, encode in ENCODERS.items():
        for value in vals:
            for enc in (*BYTE_ENCODINGS, "utf-16"):
                for prefix in PREFIXES[:4]:
                    data = prefix + value.encode(enc, "surrogatepass")
                    yield Case("encodings", f"{name} {enc} +{len(prefix)}", value, f"blob: {encode(data)}\n")
    for value in vals:
        yield Case("encodings", "code points U+XXXX", value, " ".join(f"U+{ord(c):04X}" for c in value))
        yield Case("encodings", "PowerShell -EncodedCommand", value,
                   "powershell -EncodedCommand " + base64.b64encode(f"echo '{value}'".encode("utf-16-le")).decode())


# --- terminal and markup codes inside a value ---

ESC_SPELLINGS = {"real ESC": "\x1b", "\\x1b": "\\x1b", "\\033": "\\033", "\\e": "\\e", "^[": "^[",
                 "\\u001b": "\\u001b"}
CONTROLS = {
    "SGR colour": "{e}[01;31m", "SGR reset": "{e}[m", "SGR 256": "{e}[38;5;208m", "erase line": "{e}[K",
    "grep --color pair": "{e}[01;31m{e}[K", "cursor move": "{e}[2C", "OSC title": "{e}]0;title\x07",
    "OSC 8 link": "{e}]8;;https://example.com{e}\\", "charset": "{e}(B",
}
OVERSTRIKE = {"bold (c BS c)": lambda c: f"{c}\b{c}", "underline (_ BS c)": lambda c: f"_\b{c}",
              "bold printed ^H": lambda c: f"{c}^H{c}", "underline printed ^H": lambda c: f"_^H{c}",
              "bold, printed \\b (JSON)": lambda c: f"{c}\\b{c}"}
MARKUP = {
    "HTML comment": "<!-- note -->", "long HTML comment": "<!--" + " lorem ipsum" * 100 + " -->",
    "HTML tag with attributes": '<span class="k" data-x="1">', "closing tag": "</span>",
}


def _positions(value: str) -> range:
    return range(1, len(value))


def terminal_cases(vals: dict[str, str]) -> Iterator[Case]:
    """Each control sequence × each spelling of ESC × every position inside each value; overstrike
    of every character (whole value) and at every position; grep/jq-style colouring of the whole."""
    for value in vals:
        for cname, control in CONTROLS.items():
            for ename, esc in ESC_SPELLINGS.items():
                seq = control.format(e=esc)
                for at in _positions(value):
                    yield Case("terminal", f"{cname} / {ename} @{at}", value, f"out: {value[:at]}{seq}{value[at:]} ok")
        yield Case("terminal", "grep --color whole", value, f"k=\x1b[01;31m\x1b[K{value}\x1b[m\x1b[K")
        yield Case("terminal", "jq -C string", value, f'{{\n  \x1b[0;34;1m"k"\x1b[0m: \x1b[0;32m"{value}"\x1b[0m\n}}')
        for oname, strike in OVERSTRIKE.items():
            yield Case("terminal", f"{oname}, every character", value, "".join(map(strike, value)))
            for at in range(len(value)):
                yield Case("terminal", f"{oname} @{at}", value, value[:at] + strike(value[at]) + value[at + 1:])


def markup_cases(vals: dict[str, str]) -> Iterator[Case]:
    """Each hiding markup × every position inside each value; markdown links around a part."""
    for value in vals:
        for mname, mark in MARKUP.items():
            for at in _positions(value):
                yield Case("markup", f"{mname} @{at}", value, f"x {value[:at]}{mark}{value[at:]} y")
        for at in _positions(value):
            for lname, link in (("inline link", "[{a}](https://example.com/p?q=1)"),
                                ("link with title", '[{a}](https://example.com "t")'),
                                ("reference link", "[{a}][ref]")):
                part = link.format(a=value[at:at + 3])
                yield Case("markup", f"{lname} @{at}", value, f"see {value[:at]}{part}{value[at + 3:]} now")


# --- case and transliteration of values that are not ASCII ---

TRANSLITERATIONS = [("ß", ["ss", "SS"]), ("ẞ", ["SS", "ss"]), ("ä", ["ae", "a"]), ("ö", ["oe", "o"]),
                    ("ü", ["ue", "u"]), ("Ä", ["AE", "Ae", "A"]), ("Ö", ["OE", "O"]), ("Ü", ["UE", "Ue", "U"]),
                    ("æ", ["ae"]), ("Æ", ["AE"]),
                    ("ø", ["o"]), ("Ø", ["O"]), ("å", ["a"]), ("œ", ["oe"]), ("ł", ["l"]), ("Ł", ["L"]), ("đ", ["d"]),
                    ("þ", ["th"]), ("ð", ["d"]), ("é", ["e"]), ("è", ["e"]), ("ñ", ["n"]), ("ç", ["c"]), ("ı", ["i"]),
                    ("ő", ["o"]), ("ž", ["z"]), ("č", ["c"])]


def case_cases(vals: dict[str, str]) -> Iterator[Case]:
    """Every value that is not ASCII in upper, lower, case-folded and title case, in text and in a
    path; each transliteration pair in a value, written transliterated, in lower and upper case."""
    for value in vals:
        if value.isascii():
            continue
        for cname, changed in (("upper", value.upper()), ("lower", value.lower()), ("casefold", value.casefold()),
                               ("title", value.title()), ("swapcase", value.swapcase())):
            yield Case("case", f"{cname}", value, f"value: {changed} ok")
            yield Case("case", f"{cname} in a path", value, f"notes/{changed.replace('/', '-')}/x.md")
        yield Case("case", "NFD (decomposed)", value, f"value: {unicodedata.normalize('NFD', value)} ok")
    for letter, spellings in TRANSLITERATIONS:
        value = f"Kx9{letter}mQ2w{letter}7"
        for spelling in spellings:
            written = value.replace(letter, spelling)
            for cname, changed in (("as is", written), ("lower", written.lower()), ("upper", written.upper())):
                yield Case("case", f"{letter} -> {spelling}, {cname}", value, f"key {changed} end")


# --- look-alike letters ---


def lookalike_pairs() -> list[tuple[str, str]]:
    """(ASCII letter or digit, a single character Unicode's confusables table lists for it)."""
    out: list[tuple[str, str]] = []
    for target in string.ascii_letters + string.digits:
        for entry in confusables.confusables_data.get(target, []):
            c = entry["c"]
            if len(c) == 1 and not c.isascii() and not unicodedata.category(c).startswith("M"):
                out.append((target, c))
    return out


# Letters and digits readers cannot tell apart in many fonts: each written for each other.
PROTOTYPES = [("I", "l"), ("I", "1"), ("l", "1"), ("l", "I"), ("1", "I"), ("1", "l"), ("0", "O"), ("O", "0"),
              ("0", "\u041e"), ("O", "\u041e"), ("I", "\u0406"), ("l", "\u0406"), ("1", "\u0406"), ("I", "\u04c0"),
              ("l", "\u0399"), ("0", "\u039f")]


def lookalike_cases(rng: random.Random | None = None) -> Iterator[Case]:
    """Every table pair in both directions (an ASCII value written with the look-alike; a value
    declared with the look-alike written in ASCII), in the text's view and in a path; and the
    I/l/1 and O/0 prototypes written for each other."""
    rng = rng or random.Random(31)
    pool = "bcdfghjkmnpqrstvwxyz23456789"
    for target, look in lookalike_pairs():
        base = "".join(rng.choice(pool) for _ in range(10))
        at = rng.randrange(1, 9)
        ascii_value = base[:at] + target + base[at:]
        other = base[:at] + look + base[at:]
        yield Case("look-alike", f"{target} written {look} (U+{ord(look):04X})", ascii_value, f"v {other} v")
        yield Case("look-alike", f"{look} (U+{ord(look):04X}) written {target}", other, f"v {ascii_value} v")
    for written_for, written in PROTOTYPES:
        for _ in range(5):
            base = "".join(rng.choice(pool) for _ in range(10))
            at = rng.randrange(1, 9)
            value = base[:at] + written_for + base[at:]
            yield Case("look-alike", f"prototype {written_for} written {written}", value,
                       f"v {base[:at] + written + base[at:]} v")
            yield Case("look-alike", f"prototype {written_for} written {written}, in a path", value,
                       f"notes/{(base[:at] + written + base[at:]).upper()}.md")


# --- JSON writers (masking) ---

JSON_VALUES = ["a<b>&c'd+e`f/g9Zq", "Kx9=Q2&w<p>", "Zürich-Kx9!mQ2w", "line\u2028sep-Kx9q", "Пароль-Секрет-42",
               "k9🔑Zq7xP2w!", 'q"uo\\te-Kx9z']


def _go(value: str) -> str:
    """Go's encoding/json: HTML-safe (`<`, `>`, `&` as \\u003c…), U+2028/U+2029 escaped, UTF-8 kept."""
    out = json.dumps(value, ensure_ascii=False)[1:-1]
    for c in "<>&\u2028\u2029":
        out = out.replace(c, f"\\u{ord(c):04x}")
    return out


def _dotnet(value: str) -> str:
    """System.Text.Json's default encoder: every non-ASCII character and <>&'+` as upper-case hex escapes."""
    body = "".join(f"\\u{ord(c):04X}" if c in "<>&'+`" else c for c in json.dumps(value, ensure_ascii=True)[1:-1])
    return re.sub(r"\\u([0-9a-f]{4})", lambda m: "\\u" + m.group(1).upper(), body)


def json_writer_cases() -> Iterator[Case]:
    """Each value through each JSON writer: Python (both `ensure_ascii`), node's JSON.stringify and
    perl's JSON::PP (where installed), Go, .NET (upper-case hex) and PHP (`\\/`) as they escape."""
    writers = {
        "python ensure_ascii": lambda v: json.dumps(v),
        "python utf-8": lambda v: json.dumps(v, ensure_ascii=False),
        "Go encoding/json": lambda v: f'"{_go(v)}"',
        ".NET System.Text.Json": lambda v: f'"{_dotnet(v)}"',
        "PHP json_encode": lambda v: json.dumps(v).replace("/", "\\/"),
    }
    if shutil.which("node"):
        writers["node JSON.stringify"] = lambda v: subprocess.run(
            ["node", "-e", "process.stdout.write(JSON.stringify({k: process.argv[1]}))", v],
            capture_output=True, check=True, text=True).stdout
    if shutil.which("perl"):
        writers["perl JSON::PP ascii"] = lambda v: subprocess.run(
            ["perl", "-MJSON::PP", "-CA", "-e", "print JSON::PP->new->ascii->encode({k => $ARGV[0]})", v],
            capture_output=True, check=True, text=True).stdout
    for wname, write in writers.items():
        for value in JSON_VALUES:
            yield Case("json", wname, value, write(value))
