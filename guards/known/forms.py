"""The one table of forms a known secret value can take in text: the exec masker (`guards/redact/mask.py`),
export redaction (`guards/redact/redactor.py`) and the leak gate (`guards/gate/leak_gate.py`) all read it, so a
form added here is caught by all three.

    forms_of("Zq7#kP2x", ENCODINGS)   # {"Zq7#kP2x": "raw", "WnE3I2tQMng": "base64", ..., "Zq7\\#kP2x": "shell"}

Forms (each best effort, see `forms_of`): raw; base64 (standard and URL-safe, three alignments);
URL (`quote`, `quote_plus`); hex (lower, upper); JSON string escapes; shell quoting as bash prints
it (`printf %q`, `declare -p`, `${x@Q}`) and as Python's `shlex.quote` writes it; base32 and base32hex
(five alignments, either case); quoted-printable (as `quopri` writes it, and every byte `=XX`).

Transforms (`variants`): the value reversed (`rev`) and rot13'd. A variant is searched like the value
itself, in the normalised and folded views too, so a reversed value spaced apart (`c b a`) or a rot13
one upper-cased is still found. Case, full-width letters (NFKC), spacing and markup are not forms:
the views below undo them.

Besides the forms, `normalise` gives the view that value matching also runs over: NFKC, invisible
characters (zero-width, soft hyphen, bidi marks) and markdown emphasis/code marks taken out, and
whitespace removed, so a value split by `**`, a backtick, U+200B or a wrap onto an indented line is
still the value. Its offset map lets a match be redacted in the original text.

A view must read every split of a value the way it reads the value: a character and its
compatibility form (full-width `Ｉ`) give the same view character, and a value that holds an
escape- or tag-like run (`%DA`, `&lt;`, `<b>`) is searched literally as well as decoded, since a
split through the run (`**-W%**DA…`) stops the text from decoding it (`needle_views`, `text_views`).
"""

from __future__ import annotations

import base64
import codecs
import html
import json
import quopri
import re
import unicodedata
from collections.abc import Callable, Sequence
from functools import cache, partial
from string import printable
from typing import get_args
from urllib.parse import quote, quote_plus

from confusable_homoglyphs import confusables

from muninn.core.config import Encoding

# The byte view (printed dumps) is part of the table: export and the gate read it through here.
from muninn.guards.known.dumps import ByteNeedles as ByteNeedles
from muninn.guards.known.dumps import needle_bytes as needle_bytes

ENCODINGS: tuple[Encoding, ...] = get_args(Encoding)

# Characters bash's `printf %q` escapes with a backslash (bash 5, printable ASCII); `#` and `~`
# only as the first character.
_Q_SPECIAL = set(" \t!\"$&'()*,;<>?[\\]^`{|}")
# Inside double quotes (`declare -p`) only these are escaped.
_DQ_SPECIAL = set('"\\$`')


def shell_forms(value: str) -> list[str]:
    """How a shell prints `value` back: `printf %q` (backslashes), `declare -p` (double quotes,
    the quotes themselves stay outside the form) and `'…'` quoting with `'\\''` / `'"'"'`."""
    printf_q = "".join("\\" + c if c in _Q_SPECIAL else c for c in value)
    if value[:1] in ("#", "~"):
        printf_q = "\\" + printf_q
    forms = [printf_q,
             "".join("\\" + c if c in _DQ_SPECIAL else c for c in value)]
    if "'" in value:
        forms += [value.replace("'", "'\\''"), value.replace("'", "'\"'\"'")]
    if any(not c.isprintable() for c in value):
        # bash writes a value with control characters as $'…' with C escapes.
        forms.append("$'" + value.encode("unicode_escape").decode().replace("'", "\\'") + "'")
    return [f for f in forms if f != value]


# Z85 (ZeroMQ, `basenc --z85`): base85 of the same 4-byte blocks as RFC 1924, in another alphabet.
_Z85 = bytes.maketrans(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~",
                       b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#")


def _z85encode(raw: bytes) -> bytes:
    return base64.b85encode(raw).translate(_Z85)


def base85_forms(raw: bytes) -> list[str]:
    """base85 (RFC 1924, `base64.b85encode`, git's binary patches), ascii85 (`a85encode`, Adobe's
    `<~…~>`, btoa) and Z85 (`basenc --z85`): the value encoded alone, and at the 4 byte alignments
    inside a longer stream the whole 4-byte blocks that hold value bytes only (5 characters each;
    ≥ 2 blocks kept)."""
    out: list[str] = []
    for encode in (base64.b85encode, base64.a85encode, _z85encode):
        if len(raw) < 8:
            out.append(encode(raw).decode())     # else the first core below is a part of it
        for skip in range(4):
            blocks = (len(raw) - skip) // 4
            if blocks >= 2:
                out.append(encode(raw[skip:skip + 4 * blocks]).decode())
    return [f for f in dict.fromkeys(out) if len(f) >= 8]


# What JSON writers escape besides `"`, `\\` and control characters, each spelt `\uXXXX`: Go's
# encoding/json and Gson (HTML-safe `<>&`, Gson also `='`, Go also U+2028/U+2029), .NET's
# System.Text.Json (also `+` and `` ` ``, upper-case hex, every non-ASCII character), PHP (`\/`).
_JSON_HTML = {"go": "<>&\u2028\u2029", "gson": "<>&='", "dotnet": "<>&'+`"}


def json_forms(value: str) -> list[str]:
    """The value inside a JSON string as the common writers write it: Python (`ensure_ascii` on and
    off), JavaScript's JSON.stringify, Go, Gson, .NET, PHP; `\\uXXXX` in lower and upper case."""
    forms = [json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]]
    for chars in _JSON_HTML.values():
        for ascii_only in (False, True):
            forms.append("".join(f"\\u{ord(c):04x}" if c in chars else c
                                 for c in json.dumps(value, ensure_ascii=ascii_only)[1:-1]))
    forms += [f.replace("/", "\\/") for f in forms if "/" in f]
    forms += [_UESC.sub(lambda m: m.group().upper().replace("\\U", "\\u"), f) for f in forms if "\\u" in f]
    return [f for f in dict.fromkeys(forms) if f != value]


_UESC = re.compile(r"\\u[0-9a-f]{4}")


def _cores(encoded: Callable[[bytes], bytes], block: int, bits: int, raw: bytes) -> list[str]:
    """The characters of `encoded(prefix + raw)` that depend on `raw` alone, at each of the `block` byte
    alignments a value can sit at inside a longer stream (`bits` bits a character)."""
    out = []
    for align in range(block):
        enc = encoded(b"\0" * align + raw).decode()
        out.append(enc[-(-align * 8 // bits):((align + len(raw)) * 8) // bits])
    return out


def base32_forms(raw: bytes) -> list[str]:
    """base32 (RFC 4648, `base32(1)`) and base32hex, in upper and lower case (`| tr A-Z a-z`, TOTP
    secrets, onion names), at the five alignments; cores of ≥ 8 characters."""
    cores = [c for encode in (base64.b32encode, base64.b32hexencode) for c in _cores(encode, 5, 5, raw)]
    return [f for f in dict.fromkeys(x for c in cores for x in (c, c.lower())) if len(f) >= 8]


def qp_forms(raw: bytes) -> list[str]:
    """Quoted-printable: as `quopri` (and mail) writes it, space and tab encoded too, when that differs
    from the value; and every byte as `=XX` (upper and lower-case hex), which every decoder reads."""
    every = "".join(f"={b:02X}" for b in raw)
    forms = [quopri.encodestring(raw, quotetabs=True).decode("ascii").replace("=\n", ""), every, every.lower()]
    return [f for f in dict.fromkeys(forms) if f.encode() != raw]


# Transforms of the value itself, each searched like the value (the views included); see `variants`.
TRANSFORMS: dict[Encoding, Callable[[str], str]] = {
    "reversed": lambda v: v[::-1],
    "rot13": lambda v: codecs.encode(v, "rot13"),
}


def variants(value: str, encodings: Sequence[Encoding] = ENCODINGS) -> dict[str, Encoding]:
    """The value and what `TRANSFORMS` make of it (those in `encodings`): variant -> its name. A
    palindrome or a value with no letters (for rot13) gives fewer."""
    out: dict[str, Encoding] = {value: "raw"}
    for name, transform in TRANSFORMS.items():
        if name in encodings:
            out.setdefault(transform(value), name)
    return out


def forms_of(value: str, encodings: Sequence[Encoding]) -> dict[str, Encoding]:
    """Every needle for `value` in the chosen encodings: form -> encoding name.

    base64 is matched at the 3 byte alignments a value can sit at inside a longer encoded stream,
    keeping only the characters that depend on the value alone (a match needs the value to be
    ≥ ~4 bytes and loses 1–2 characters at each edge, which stay visible). Wrapped forms are
    matched by the callers, which also search with line breaks taken out. The `TRANSFORMS` of the
    value (reversed, rot13) are needles too, raw; compressed blobs (gzip, zlib) are read by the byte
    view (`dumps.byte_runs`), not enumerated; so is one blob inside another (`base64 | base64`).
    """
    out: dict[str, Encoding] = {}
    if "raw" in encodings:
        out[value] = "raw"
    raw = value.encode()
    if "base64" in encodings:
        for align in range(3):
            enc = base64.b64encode(b"\0" * align + raw).decode()
            start = (0, 2, 3)[align]
            end = ((align + len(raw)) * 8) // 6
            core = enc[start:end]
            if len(core) >= 8:
                out.setdefault(core, "base64")
                out.setdefault(core.replace("+", "-").replace("/", "_"), "base64")
    if "base85" in encodings:
        for form in base85_forms(raw):
            out.setdefault(form, "base85")
    if "url" in encodings:
        for form in (quote(value, safe=""), quote_plus(value, safe=""), quote(value)):
            out.setdefault(form, "url")
    if "hex" in encodings:
        for form in (raw.hex(), raw.hex().upper()):
            out.setdefault(form, "hex")
    if "json" in encodings:
        for form in json_forms(value):
            out.setdefault(form, "json")
    if "shell" in encodings:
        for form in shell_forms(value):
            out.setdefault(form, "shell")
    if "base32" in encodings:
        for form in base32_forms(raw):
            out.setdefault(form, "base32")
    if "qp" in encodings:
        for form in qp_forms(raw):
            out.setdefault(form, "qp")
    for form, name in variants(value, encodings).items():
        if name != "raw":
            out.setdefault(form, name)
    return out


# --- the normalised view ---

# Views ignore markup and spacing (and, folded, case and separators), so a short needle would
# match across words: a value needs 6 characters to get a view, and its view form 4 (normalised)
# or 5 (folded) characters: `W$Io_2` is `W$Io2` normalised, `DSA:31` is `dsa31` folded.
VALUE_MIN = 6
NORMALISED_MIN = 4
FOLDED_MIN = 5

# Markdown marks that split a word without changing it: emphasis, strike-through, inline code.
_MARKUP = frozenset("*_`~")
# Invisible characters that are not format (Cf) characters but still render as nothing.
_INVISIBLE = frozenset("\u034f\u115f\u1160\u3164\uffa0")


def _dropped(ch: str) -> bool:
    return ch in _MARKUP or ch.isspace() or ch in _INVISIBLE or unicodedata.category(ch) == "Cf"


_ASCII_DROP = re.compile(r"[*_`~\s]+")
# Look-alike letters and digits read as one character in every view, the way Unicode's confusables
# table groups them (its prototypes): `I`, `1`, `l` and what imitates them (Cyrillic `І`, Greek `Ι`),
# and `0`, `O` (Cyrillic `О`). A value typed `P0x` is found written `POx` or `PОx`, and back.
_CANON = str.maketrans({"I": "l", "1": "l", "0": "O"})
# The folded view has no case, so there `i` is `I` too; `O` folds to `o`.
_FOLD_CANON = str.maketrans({"i": "l", "1": "l", "0": "o"})
# Terminal control sequences (CSI with SGR colours and erases, OSC titles and links, charset and
# keypad escapes), as real bytes or as printed (`\x1b[`, `\033[`, `\e[`, `\u001b[`, `^[[`), and
# backspace overstrike (`a\ba` bold, `_\ba` underline; real, or printed `^H`, `\b`, `\x08`, `\010`):
# a terminal shows neither (`grep --color`, `jq -C`, man pages, `script` logs).
_ESC = r"(?:\x1b|\\x1[bB]|\\033|\\e|\\u001[bB]|\^\[)"
_TERMINAL = (rf"{_ESC}(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]{{0,512}}?(?:\x07|\\a|\\x07|\^G|{_ESC}\\)"
             r"|[()][0-9A-Za-z]|[=>78MDEHc])|[^\s\\]?(?:\x08|\^H|\\b|\\x08|\\010)")
# Markdown links show their text, not their target: `Zq7[kP2x](https://…)` reads `Zq7kP2x`.
_LINK = (r"\[(?=[^\[\]\n]{1,256}\]\()|\]\([^()\s]{0,2048}(?:\s+\"[^\"\n]{0,256}\")?\)"
         r"|\[(?=[^\[\]\n]{1,256}\]\[)|\]\[[^\[\]\n]{0,64}\]")
# One escaped character (an HTML entity, %XX, \xXX, \uXXXX, \u{X}, \NNN octal): decoded in the view, so
# `&#90;&#113;…`, `%5A%71…` and a half-escaped JSON string are the value they spell.
ESCAPE = re.compile(r"&#[0-9]{1,7};?|&#[xX][0-9a-fA-F]{1,6};?|&[A-Za-z][A-Za-z0-9]{1,31};|%[0-9a-fA-F]{2}"
                    r"|\\u[0-9a-fA-F]{4}|\\u\{[0-9a-fA-F]{1,6}\}|\\x[0-9a-fA-F]{2}|\\[0-7]{3}")
# HTML tags and comments split a word in rendered markdown without showing: `Zq7k<b></b>P2x`.
_TAG = re.compile(r"<!--.*?-->|</?[A-Za-z][A-Za-z0-9]{0,15}(?:\s[^<>]{0,200})?/?>", re.S)
# Plain runs between these tokens (spaces and markdown marks included) are read in C by `normalise`.
_ASCII_TOKENS = re.compile(rf"(?P<drop>{_TERMINAL}|{_TAG.pattern}|{_LINK})|(?P<esc>{ESCAPE.pattern})", re.S)
_MAY_HIDE = re.compile(rf"{_TERMINAL}|{ESCAPE.pattern}|{_TAG.pattern}|{_LINK}", re.S)
_MAY_HIDE_CHARS = ("&", "%", "\\", "<", "\x1b", "\x08", "^", "](", "][")


def decode_escape(token: str) -> str:
    """The character one `ESCAPE` match spells (U+FFFD when it names none)."""
    if token[0] == "%":
        code = int(token[1:], 16)
    elif token[0] == "\\":
        code = int(token[1:], 8) if token[1] in "01234567" else int(token[2:].strip("{}"), 16)
    else:
        return html.unescape(token)
    return chr(code) if code <= 0x10FFFF else "\ufffd"


@cache
def skeleton() -> dict[str, str]:
    """Non-ASCII character → the printable ASCII character it is confusable with (Unicode's table):
    a value typed with a Cyrillic `к` or a Greek `ο` is still the value a reader sees. The table
    lists some lower-case lookalikes only under their capital (`К` → `K`): those are added too."""
    out: dict[str, str] = {}
    for target in printable.strip():
        for entry in confusables.confusables_data.get(target, []):
            if not entry["c"].isascii() and len(entry["c"]) == 1:
                out.setdefault(entry["c"], target)
    for ch, target in list(out.items()):
        low = ch.lower()
        if target.isupper() and len(low) == 1 and low != ch and not low.isascii():
            out.setdefault(low, target.lower())
    return out


def _view_chars(ch: str) -> str:
    """What one non-ASCII character (or one decoded escape) adds to the normalised view."""
    if ch.isascii():
        return "" if _dropped(ch) else ch
    compat = unicodedata.normalize("NFKC", ch)
    if compat.isascii():
        # A compatibility form of ASCII (full-width `Ｉ`, math `𝐈`) is that ASCII, as the value holds
        # it: the confusables table would read `Ｉ` as `l` and miss a full-width value.
        return "".join(c for c in compat if not _dropped(c))
    table = skeleton()
    return "".join(table.get(c, c) for c in unicodedata.normalize("NFKC", table.get(ch, ch)) if not _dropped(c))


def normalise(text: str, decode: bool = True) -> tuple[str, list[int]]:
    """(view, where) — `view[i]` came from `text[where[i]]`. NFKC per character, confusables mapped
    to the ASCII they look like, escapes decoded, invisible and markup characters, HTML tags and
    whitespace left out. Both needles and text go through it, so `_` or `*` inside a value costs
    nothing. A decoded escape maps to where it starts (`escape_end` finds where it ends).
    `decode=False` is the literal view: escapes and tags kept as written."""
    if decode and may_hide(text):
        view, where = _normalise_escaped(text)
        return view.translate(_CANON), where
    view: list[str] = []
    where: list[int] = []
    pos = 0
    # ASCII runs in C (kept characters between dropped ones), other characters one at a time.
    for m in _NON_ASCII.finditer(text) if not text.isascii() else ():
        _ascii_run(text, pos, m.start(), view, where)
        for i in range(m.start(), m.end()):
            for c in _view_chars(text[i]):
                view.append(c)
                where.append(i)
        pos = m.end()
    _ascii_run(text, pos, len(text), view, where)
    return "".join(view).translate(_CANON), where


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _ascii_run(text: str, start: int, end: int, view: list[str], where: list[int]) -> None:
    pos = start
    for m in _ASCII_DROP.finditer(text, start, end):
        view.append(text[pos:m.start()])
        where.extend(range(pos, m.start()))
        pos = m.end()
    view.append(text[pos:end])
    where.extend(range(pos, end))


def _normalise_escaped(text: str) -> tuple[str, list[int]]:
    """`normalise` for text that holds escapes or HTML tags: plain runs as usual, each escape decoded."""
    view: list[str] = []
    where: list[int] = []

    def plain(start: int, end: int) -> None:
        part, offsets = normalise(text[start:end])
        view.append(part)
        where.extend(start + o for o in offsets)

    pos = 0
    for m in _ASCII_TOKENS.finditer(text):
        plain(pos, m.start())
        if m.group("esc"):
            # An entity may spell several characters (`&fjlig;`) or none (`&#7;`: HTML drops it).
            for c in "".join(map(_view_chars, decode_escape(m.group(0)))):
                view.append(c)
                where.append(m.start())
        pos = m.end()
    plain(pos, len(text))
    return "".join(view), where


def may_hide(text: str) -> bool:
    """Whether `text` holds an escape or an HTML tag, so its decoded and literal views differ."""
    return any(c in text for c in _MAY_HIDE_CHARS) and _MAY_HIDE.search(text) is not None


def escape_end(text: str, pos: int) -> int:
    """Where the view character that came from `text[pos]` ends in `text` (past a whole escape)."""
    m = ESCAPE.match(text, pos)
    return m.end() if m else pos + 1


def normalised_text(text: str, decode: bool = True) -> str:
    """`normalise(text)[0]` without the offset map: searching needs only this; the map is built
    only when something is found (most texts hold no value)."""
    if decode and may_hide(text):
        # Escapes decoded and hiding tokens dropped by one C-level pass, then read as plain text.
        text = _ASCII_TOKENS.sub(_token_text, text)
    if text.isascii():
        return _ASCII_DROP.sub("", text).translate(_CANON)
    return _ASCII_DROP.sub("", _NON_ASCII.sub(_view_run, text)).translate(_CANON)


def _token_text(m: re.Match[str]) -> str:
    return decode_escape(m.group()) if m.group("esc") else ""


def _view_run(m: re.Match[str]) -> str:
    return "".join(map(_view_chars, m.group()))


def folded_text(text: str, decode: bool = True) -> str:
    """`folded(text)[0]` without the offset map."""
    if text.isascii() and not (decode and may_hide(text)):
        return _FOLD.sub("", text.lower().translate(_FOLD_CANON))
    view = normalised_text(text if text.isascii() else _casefold(text), decode)
    if view.isascii():
        return _FOLD.sub("", view.lower().translate(_FOLD_CANON))
    spread = unicodedata.normalize("NFKD", view)
    if len(spread) == len(view) and not _TRANSLIT_CHARS.search(view):
        return "".join(_KEEP_ANY.findall(spread.lower().translate(_FOLD_CANON)))
    return "".join(map(fold_chars, view))


def normalised(value: str, decode: bool = True) -> str | None:
    """The normalised form of a needle, or None when it is too short to search for in a view."""
    view = normalise(value, decode)[0]
    return view if len(value) >= VALUE_MIN and len(view) >= NORMALISED_MIN else None


ViewReader = tuple[Callable[[str], str], Callable[[str], tuple[str, list[int]]]]


def needle_views(value: str, fold: bool = False) -> list[str]:
    """The views a value is searched for in (normalised, or folded with `fold`): as decoded and,
    when it holds an escape- or tag-like run, literally too. The text view decodes such a run only
    where it stands unbroken, so a split through it leaves it literal; a value with several runs,
    one split and one not, is the one mix not covered. Empty when the value is too short."""
    view = fold_needle if fold else normalised
    spellings = [value]
    if fold and _UMLAUT.search(value):
        # `München` is written `Muenchen` as often as `Munchen` (the folded view's own reading).
        spellings.append(_UMLAUT.sub(lambda m: _UMLAUTS[m.group()], value))
    found = []
    for spelling in spellings:
        found.append(view(spelling))
        if may_hide(spelling):
            found.append(view(spelling, decode=False))
    return list(dict.fromkeys(v for v in found if v))


_UMLAUTS = {"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue"}
_UMLAUT = re.compile("[äöüÄÖÜ]|[aouAOU]\u0308")
_UMLAUTS.update({base + "\u0308": e for base, e in (("a", "ae"), ("o", "oe"), ("u", "ue"), ("A", "Ae"), ("O", "Oe"),
                                                      ("U", "Ue"))})


def text_views(text: str, fold: bool = False) -> list[ViewReader]:
    """(view_of, mapped) pairs to search `text` in, the partner of `needle_views`: the decoded view,
    and the literal one when the text holds an escape or a tag (else the two are the same)."""
    readers: list[ViewReader] = [(folded_text, folded) if fold else (normalised_text, normalise)]
    if may_hide(text):
        readers.append((partial(folded_text, decode=False), partial(folded, decode=False)) if fold
                       else (partial(normalised_text, decode=False), partial(normalise, decode=False)))
    return readers


_FOLD = re.compile(r"[^a-z0-9]+")
_KEEP = re.compile(r"[a-z0-9]+")
# Letters and digits of any script (not `_`), for a view that is not ASCII.
_KEEP_ANY = re.compile(r"[^\W_]+")


def folded(text: str, decode: bool = True) -> tuple[str, list[int]]:
    """The view paths are compared on: case folded, letters and digits only (of any script), so every
    slug, case and separator variant of a value (`Zq7#kP2x`, `zq7-kp2x`, `ZQ7_KP2X`, `Straße`/`STRASSE`)
    folds to one string. The text is case-folded before the normalised view reads look-alikes, so a
    letter and its capital read as the same imitated letter (Greek `Ν` and `ν` both as `ν` does)."""
    if text.isascii():
        view, where = normalise(text, decode)
        if view.isascii():
            # The common case, in C: runs of letters and digits of the lower-cased view.
            lowered = view.lower().translate(_FOLD_CANON)
            runs = list(_KEEP.finditer(lowered))
            return "".join(m.group() for m in runs), [w for m in runs for w in where[m.start():m.end()]]
    else:
        view, where = normalise(_casefold(text), decode)
    spread = unicodedata.normalize("NFKD", view)
    if len(spread) == len(view) and not _TRANSLIT_CHARS.search(view):
        lowered = spread.lower().translate(_FOLD_CANON)
        runs = list(_KEEP_ANY.finditer(lowered))
        return "".join(m.group() for m in runs), [w for m in runs for w in where[m.start():m.end()]]
    pairs = [(c, w) for ch, w in zip(view, where, strict=True) for c in fold_chars(ch)]
    return "".join(c for c, _ in pairs), [w for _, w in pairs]


def _casefold(text: str) -> str:
    """`text.casefold()` of the same length: a character that folds to several (`ß` -> `ss`) is kept
    (`fold_chars` folds it later), so offsets, and an overstrike `ß\bß`, stay as they were."""
    lowered = text.casefold()
    if len(lowered) == len(text):
        return lowered
    return "".join(c if len(c.casefold()) != 1 else c.casefold() for c in text)


# Letters that casefold and NFKD leave as they are, by how they are written in ASCII.
_TRANSLIT = {"æ": "ae", "œ": "oe", "ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i", "ħ": "h",
             "ŧ": "t", "ŀ": "l", "ĸ": "k", "ŋ": "n", "ɖ": "d", "ƒ": "f"}


_TRANSLIT_CHARS = re.compile("[" + "".join(_TRANSLIT) + "ßẞ]")


@cache
def fold_chars(ch: str) -> str:
    """What one character of the text adds to the folded view: case folded (`ß` -> `ss`), accents
    taken off (NFKD), transliterated (`ø` -> `o`), read as the letter it imitates (from its lower
    case: Greek `Ν` and `ν` both fold as `ν` does), letters and digits of any script kept."""
    out: list[str] = []
    table = skeleton()
    for c in unicodedata.normalize("NFKD", ch.casefold()):
        if unicodedata.combining(c):
            continue
        for d in _TRANSLIT.get(c, c):
            if not d.isascii():
                d = table.get(d, d).lower()
            d = d.translate(_FOLD_CANON)
            if d.isalnum() and (d.isascii() or not d.isdigit() or d.isdecimal()):
                out.append(d)
    return "".join(out)


def fold(value: str) -> str:
    return folded(value)[0]


def fold_needle(value: str, decode: bool = True) -> str | None:
    """The folded form of a needle, or None when it is too short to search for in a view."""
    view = folded(value, decode=decode)[0]
    return view if len(value) >= VALUE_MIN and len(view) >= FOLDED_MIN else None
