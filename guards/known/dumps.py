"""The bytes a text spells when a tool printed them as a dump: the byte view that value matching runs
over, beside the text's own characters (`guards/known/forms.py` owns the forms; this module reads dumps).

    byte_runs("00000000: 5a71 3723 6b50 3278  Zq7#kP2x")   # [Run(b"Zq7#kP2x", starts, ends)]

Layouts read, each wherever it stands in a text (a value may run over several lines of one dump):
- bit tables: `xxd -b` (eight binary digits a byte, ASCII column left out);
- decimal and octal tables: `od -td1`/`-tu1`/`-to1`/`-b`, with or without offsets (each line read
  both ways when its digits allow it: the layout does not say which);
- hex tables: `xxd`, `hexdump -C`, `hexdump`/`hexdump -x`, `od -x`/`-tx1`/`-tx2`/`-tx4` with or
  without offsets (`-An`): offset column and ASCII column left out; groups of 4 or 8 digits read
  both big-endian (xxd) and little-endian (od, hexdump), since the layout does not say which;
- `od -c` / `od -An -c`: one byte per 4-character cell (a character, `\\n`-style escape or octal);
- byte lists: `0x5a, 0x71` (C arrays, `xxd -i`), `5a:71:37` / `5a 71 37` (openssl, Wireshark),
  decimal arrays `[90, 113, 55]` (Python `list(b)`, Java `byte[]`, negative bytes too);
- byte strings: `\\x5a\\x71…` and `\\303\\237` runs with literal characters between
  (Python `repr(bytes)`, C strings, bash `$'…'`);
- code points: `U+005A U+0071` (read as characters, then UTF-8);
- uuencode lines (`uuencode`, `binascii.b2a_uu`): a line whose length character matches its length;
- base64 and hex blobs, decoded from their start (for UTF-16: UTF-8 copies are needles of `forms_of`);
- decimal code points apart by spaces (`print(*map(ord, v))`), bit strings (`basenc --base2msbf`, bytes
  of eight bits apart), NATO spelling (matched in any case), `xxd -e` little-endian words, `0x4A0x74`;
- base64 read back to front (`base64 | rev`), and any run that spells printable text read once more
  (`base64 | base64`, hex of base64);
- compressed data (gzip, zlib, bzip2, xz by their magic bytes) in any run above, inflated (the first
  `INFLATE_MAX` bytes): `gzip | base64` of a value is the value. Each inflated byte maps to the whole
  run that spelled the compressed stream.

Each run keeps, per byte, where in the text it came from, so a match hides the span that spelled it.
A run is only worth reading when it is at least as long as the shortest value (`MIN_BYTES`).
"""

from __future__ import annotations

import base64
import binascii
import bz2
import lzma
import re
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Generic, TypeVar

import ahocorasick_rs

MIN_BYTES = 6
INFLATE_MAX = 1 << 20      # bytes inflated per compressed run: a bomb costs no more than this
T = TypeVar("T")

_HEX = "0-9a-fA-F"
# xxd: `00000000: 5a71 3723 …  Zq7#…`; its groups are in byte order.
_XXD = re.compile(rf"^[{_HEX}]{{6,16}}: ((?:[{_HEX}]{{2}})+(?: (?:[{_HEX}]{{2}})+)*)", re.M)
# xxd -b: `00000000: 01101010 01110100 …  jt`.
_XXD_BITS = re.compile(rf"^[{_HEX}]{{6,16}}: ([01]{{8}}(?: [01]{{8}})*)", re.M)
_BITS = re.compile(r"[01]{8}")
# od -td1 / -tu1 / -to1 / -b: an optional 7-digit offset (octal or decimal), then numbers of 1-3 digits.
_NUMBERS = re.compile(r"^(?:\d{7})?((?:[ \t]+-?\d{1,3}){2,32})[ \t]*$", re.M)
_NUMBER = re.compile(r"-?\d+")
# hexdump -C, hexdump, od -x/-tx*: an optional offset, then groups of one width, then `|ascii|` or nothing.
# The offset, when there is one, is the first group: told apart by its width (7 or 8 digits, the rest 2-8).
_TABLE = re.compile(rf"^[ \t]{{0,4}}([{_HEX}]{{2,8}}(?![^\s|])(?:[ \t]{{1,4}}[{_HEX}]{{2,8}}(?![^\s|]))*)"
                    r"[ \t]*(?:\|(.*)\|)?[ \t]*$", re.M)
_GROUP = re.compile(rf"[{_HEX}]+")
# od -c: cells four wide after an optional 7-digit offset.
_OD_C = re.compile(r"^(?:[0-7]{7})?((?:   [^\s\\]|  \\[0abfnrtv\\]|  \\[0-7]|    | [0-7]{3}|  \*\*){2,32})"
                   r"[ \t]*$", re.M)
_OD_ESC = {"0": 0, "a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92}
# 0x5a, 0x71 … / 0x5A0x71… / 5a:71:37 … / 5a 71 37 …
_HEX_LIST = re.compile(rf"0[xX][{_HEX}]{{2}}(?:[\s,]{{0,8}}0[xX][{_HEX}]{{2}})+"
                       rf"|(?<![{_HEX}:-])[{_HEX}]{{2}}(?:(?::|-|[ \t]{{1,2}}|:?\r?\n[ \t]*)[{_HEX}]{{2}}){{3,}}"
                       rf"(?![{_HEX}])")
_DEC_LIST = re.compile(r"(?<![\d.])-?\d{1,3}(?:[ \t]*,[ \t\r\n]*-?\d{1,3}){3,}(?![\d.])")
_BYTE_ESC = re.compile(r"(?<![^\s'\"=:(\[{,])(?:\\x[0-9a-fA-F]{2}|\\[0-7]{3}|\\[nrt0'\"\\]|[^\s\\'\"])*"
                       r"(?:\\x[0-9a-fA-F]{2}|\\[0-7]{3})(?:\\x[0-9a-fA-F]{2}|\\[0-7]{3}|\\[nrt0'\"\\]|[^\s\\'\"])*")
_ONE_ESC = re.compile(r"\\x([0-9a-fA-F]{2})|\\([0-7]{3})|\\([nrt0'\"\\])|(.)", re.S)
_SIMPLE_ESC = {"n": 10, "r": 13, "t": 9, "0": 0, "'": 39, '"': 34, "\\": 92}
_CODE_POINTS = re.compile(r"[uU]\+[0-9a-fA-F]{4,6}(?:[\s,]{0,3}[uU]\+[0-9a-fA-F]{4,6})+")
_CODE_POINT = re.compile(r"[uU]\+([0-9a-fA-F]{4,6})")
# A uuencoded line: only characters 0x20-0x60 (no lower case), its first one giving the byte count.
_UU_LINE = re.compile(r"^[!-M][ -`]{4,60}$", re.M)


@dataclass
class Run:
    """Bytes a dump spells; `starts[i]`/`ends[i]` is the span of text that spelled byte i, and
    `shown[i]` where its ASCII column shows it (xxd, hexdump -C), else -1."""

    data: bytes
    starts: list[int]
    ends: list[int]
    shown: list[int]
    caseless: bool = False     # the layout does not say a letter's case (NATO spelling): matched in any case


class _Builder:
    """Bytes gathered in text order, cut into runs where the dump stops."""

    def __init__(self) -> None:
        self.runs: list[Run] = []
        self._data = bytearray()
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._shown: list[int] = []

    def __len__(self) -> int:
        return len(self._data)

    def add(self, byte: int, start: int, end: int) -> None:
        self._data.append(byte & 0xFF)
        self._starts.append(start)
        self._ends.append(end)
        self._shown.append(-1)

    def show(self, first: int, column: int) -> None:
        """Bytes from `first` on are shown one character each from `column` on (an ASCII column)."""
        for k in range(first, len(self._shown)):
            self._shown[k] = column + k - first

    def cut(self, caseless: bool = False) -> None:
        if len(self._data) >= MIN_BYTES:
            self.runs.append(Run(bytes(self._data), self._starts, self._ends, self._shown, caseless))
        self._data, self._starts, self._ends, self._shown = bytearray(), [], [], []


def _hex_groups(builder: _Builder, text: str, start: int, end: int, little: bool) -> None:
    for g in _GROUP.finditer(text, start, end):
        digits = g.group()
        pairs = [int(digits[i:i + 2], 16) for i in range(0, len(digits) - 1, 2)]
        if little:
            pairs.reverse()
        for byte in pairs:
            builder.add(byte, g.start(), g.end())


def _lines(regex: re.Pattern[str], text: str) -> Iterator[tuple[re.Match[str], bool]]:
    """Matches of a line reader, each with whether it is on the line after the one before."""
    last_end = -1
    for m in regex.finditer(text):
        yield m, last_end >= 0 and text.count("\n", last_end, m.start()) == 1
        last_end = m.end()


def _tables(text: str, out: list[Run]) -> None:
    for little in (False, True):
        b = _Builder()
        for m, next_line in _lines(_TABLE, text):
            groups = _GROUP.findall(m.group(1))
            widths = {len(g) for g in groups[1:]} or {len(groups[0])}
            if len(widths) != 1 or (len(groups) < 2 and (len(groups[0]) % 2 or not next_line)):
                b.cut()     # one group alone is a table's last line, or no table
                continue
            if len({len(groups[0]), *widths}) > 1 or len(groups[0]) % 2:
                first = _GROUP.search(m.group(1))
                start = m.start(1) + (first.end() if first else 0)   # the first group is an offset
            else:
                start = m.start(1)
            if next(iter(widths)) == 2 and little:
                continue     # single bytes have no order: read once
            if not next_line:
                b.cut()
            first = len(b)
            _hex_groups(b, text, start, m.end(1), little)
            if m.group(2) is not None and len(m.group(2)) == len(b) - first:
                b.show(first, m.start(2))
        b.cut()
        out += b.runs


def _bit_groups(builder: _Builder, text: str, start: int, end: int, little: bool) -> None:
    for g in _BITS.finditer(text, start, end):
        builder.add(int(g.group(), 2), g.start(), g.end())


def _xxd(text: str, out: list[Run], regex: re.Pattern[str] = _XXD, groups: Callable[..., None] = _hex_groups,
         little: bool = False) -> None:
    """`little`: each group read little-endian (`xxd -e` prints 4-byte words so)."""
    b = _Builder()
    for m, next_line in _lines(regex, text):
        if not next_line:
            b.cut()
        first = len(b)
        groups(b, text, m.start(1), m.end(1), little=little)
        # The ASCII column is the line's last characters, one a byte, after two spaces.
        line_end = text.find("\n", m.end())
        line_end = len(text) if line_end < 0 else line_end - (text[line_end - 1] == "\r")
        column = line_end - (len(b) - first)
        if text[column - 2:column] == "  ":
            b.show(first, column)
    b.cut()
    out += b.runs


def _numbers(text: str, out: list[Run]) -> None:
    """od's decimal and octal byte tables, read once as decimal and once as octal."""
    for base in (10, 8):
        b = _Builder()
        for m, next_line in _lines(_NUMBERS, text):
            cells = [(int(g.group(), base) if base == 10 or not {"8", "9"} & set(g.group())
                      else None, g) for g in _NUMBER.finditer(text, m.start(1), m.end(1))]
            if not next_line or any(n is None or not -128 <= n <= 255 for n, _ in cells):
                b.cut()
            if any(n is None or not -128 <= n <= 255 for n, _ in cells):
                continue
            for n, g in cells:
                b.add(n, g.start(), g.end())
        b.cut()
        out += b.runs


def _od_c(text: str, out: list[Run]) -> None:
    b = _Builder()
    for m, next_line in _lines(_OD_C, text):
        if not next_line:
            b.cut()
        for at in range(m.start(1), m.end(1), 4):
            cell = text[at:at + 4].strip(" ")
            if cell == "**":
                continue     # od -c marks the rest of a multi-byte character
            if not cell:
                byte = 32
            elif cell.isdigit() and len(cell) == 3:
                byte = int(cell, 8)
            elif cell.startswith("\\"):
                byte = _OD_ESC.get(cell[1], int(cell[1], 8) if cell[1].isdigit() else 0)
            else:
                byte = ord(cell) if ord(cell) < 256 else 0
            b.add(byte, at, at + 4)
    b.cut()
    out += b.runs


def _lists(text: str, out: list[Run]) -> None:
    for m in _HEX_LIST.finditer(text):
        b = _Builder()
        for g in re.finditer(rf"(?:0[xX])?([{_HEX}]{{2}})", m.group()):
            b.add(int(g.group(1), 16), m.start() + g.start(), m.start() + g.end())
        b.cut()
        out += b.runs
    for m in _DEC_LIST.finditer(text):
        numbers = [(int(g.group()), g) for g in re.finditer(r"-?\d+", m.group())]
        if all(-128 <= n <= 255 for n, _ in numbers):
            b = _Builder()
            for n, g in numbers:
                b.add(n, m.start() + g.start(), m.start() + g.end())
            b.cut()
            out += b.runs


def _byte_strings(text: str, out: list[Run]) -> None:
    for m in _BYTE_ESC.finditer(text):
        b = _Builder()
        for e in _ONE_ESC.finditer(m.group()):
            start, end = m.start() + e.start(), m.start() + e.end()
            if e.group(1):
                b.add(int(e.group(1), 16), start, end)
            elif e.group(2):
                b.add(int(e.group(2), 8), start, end)
            elif e.group(3):
                b.add(_SIMPLE_ESC[e.group(3)], start, end)
            else:
                for byte in e.group(4).encode("utf-8", "surrogatepass"):
                    b.add(byte, start, end)
        b.cut()
        out += b.runs


def _code_points(text: str, out: list[Run]) -> None:
    for m in _CODE_POINTS.finditer(text):
        b = _Builder()
        for c in _CODE_POINT.finditer(text, m.start(), m.end()):
            code = int(c.group(1), 16)
            for byte in (chr(code).encode("utf-8", "surrogatepass") if code <= 0x10FFFF else b"?"):
                b.add(byte, c.start(), c.end())
        b.cut()
        out += b.runs


def _uu(text: str, out: list[Run]) -> None:
    b = _Builder()
    for m, next_line in _lines(_UU_LINE, text):
        line = m.group()
        count = (ord(line[0]) - 32) & 0x3F
        if (len(line) - 1) not in range(((count + 2) // 3) * 4, ((count + 2) // 3) * 4 + 2):
            b.cut()
            continue
        try:
            data = binascii.a2b_uu(line)
        except binascii.Error:
            b.cut()
            continue
        if not next_line:
            b.cut()
        for i, byte in enumerate(data):
            at = m.start() + 1 + (i // 3) * 4
            b.add(byte, at, min(at + 4, m.end()))
    b.cut()
    out += b.runs


# base64 (standard or URL-safe, wrapped over lines) and plain hex blobs, decoded from their start: the
# value's UTF-16 bytes inside them (PowerShell's -EncodedCommand, a Windows tool's output) are found
# here rather than as needles of every alignment.
_B64_RUN = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}(?:\r?\n[A-Za-z0-9+/_-]{4,})*={0,2}")
_HEX_RUN = re.compile(rf"(?<![{_HEX}])(?:[{_HEX}]{{2}}){{8,}}(?:\r?\n(?:[{_HEX}]{{2}})+)*(?![{_HEX}])")
_WRAP = re.compile(r"[\r\n=]")
# Adobe's delimited ascii85 (`<~…~>`, a85encode(adobe=True), PostScript and PDF streams).
_A85_RUN = re.compile(r"<~([!-uz\s]{8,}?)~>")


def _blobs(text: str, out: list[Run], back: list[Run] | None = None) -> None:
    """`back`: where base64 read back to front (`base64 | rev`) goes, when not with the rest."""
    for m in _HEX_RUN.finditer(text):
        kept = [m.start() + i for i, c in enumerate(m.group()) if c not in "\r\n"]
        digits = _WRAP.sub("", m.group())
        b = _Builder()
        for i in range(0, len(digits) - 1, 2):
            b.add(int(digits[i:i + 2], 16), kept[i], kept[i + 1] + 1)
        b.cut()
        out += b.runs
    for m in _A85_RUN.finditer(text):
        kept = [m.start() + 2 + i for i, c in enumerate(m.group(1)) if not c.isspace()]
        try:
            data = base64.a85decode(m.group(), adobe=True)
        except ValueError:
            continue
        b = _Builder()
        for i, byte in enumerate(data):
            b.add(byte, kept[min(i * 5 // 4, len(kept) - 1)], kept[min((i * 5 + 4) // 4, len(kept) - 1)] + 1)
        b.cut()
        out += b.runs
    for m in _B64_RUN.finditer(text):
        chars = _WRAP.sub("", m.group())
        if chars.isdigit():
            continue                 # a number: nothing encoded
        kept = [m.start() + i for i, c in enumerate(m.group()) if c not in "\r\n="]
        _b64_run(chars, kept, out)
        if "\n" in m.group().rstrip("\r\n="):
            # The last line may be the next word, not the blob's end (`…zzJe\nafter`): read without it too.
            last = m.group().rstrip("\r\n=").rindex("\n")
            short = _WRAP.sub("", m.group()[:last])
            if len(short) >= 16:
                _b64_run(short, kept[:len(short)], out)
        if "/" in chars:
            # A path's last part (`notes/<base64>`): `/` is base64 too, so the run began at the wrong place.
            cut = chars.rindex("/") + 1
            if len(chars) - cut >= 16:
                _b64_run(chars[cut:], kept[cut:], out)
        # The same blob as `rev` prints it (each line reversed): read back to front, line by line.
        lines = _line_spans(text, m.start(), m.end())
        for kept_lines in (lines, lines[:-1]) if len(lines) > 1 else (lines,):
            order = [p for line in kept_lines for p in reversed(line)]
            if len(order) >= 16:
                _b64_run("".join(text[p] for p in order), order, out if back is None else back)


def _line_spans(text: str, start: int, end: int) -> list[list[int]]:
    """Offsets of each line's base64 characters between `start` and `end`."""
    lines: list[list[int]] = [[]]
    for p in range(start, end):
        if text[p] == "\n":
            lines.append([])
        elif text[p] not in "\r=":
            lines[-1].append(p)
    return lines


def _b64_run(chars: str, kept: list[int], out: list[Run]) -> None:
    try:
        data = base64.b64decode(chars.replace("-", "+").replace("_", "/") + "=" * (-len(chars) % 4))
    except (binascii.Error, ValueError):
        return
    b = _Builder()
    for i, byte in enumerate(data):
        b.add(byte, kept[min(i * 4 // 3, len(kept) - 1)], kept[min((i * 4 + 3) // 3, len(kept) - 1)] + 1)
    b.cut()
    out += b.runs


# Decimal numbers apart by spaces (`print(*map(ord, v))`, "80 101 108 …"): code points, read as characters
# then UTF-8; when every number fits a byte, read as bytes too (`od -tu1` without its layout).
_SPACED_DEC = re.compile(r"(?<![\w.,:/+-])\d{1,7}+(?:(?:[ \t]{1,3}+|[ \t]*+\r?\n[ \t]*+)\d{1,7}+){5,}(?![\w.,:/-])")
# Bits: eight a byte, apart or run together and wrapped anywhere (`xxd -b` columns, "01010000 01100101",
# `basenc --base2msbf`/`--base2lsbf`).
_BIT_RUN = re.compile(r"(?<![0-9])[01]{8}(?:(?:[ \t]{1,2}|[ \t]*\r?\n[ \t]*)?[01]){40,}(?![0-9])")


def _spaced_numbers(text: str, out: list[Run]) -> None:
    for m in _SPACED_DEC.finditer(text):
        cells = [(int(g.group()), g.start() + m.start(), g.end() + m.start()) for g in _NUMBER.finditer(m.group())]
        points = _Builder()
        for n, start, end in cells:
            if n > 0x10FFFF or 0xD800 <= n <= 0xDFFF:
                points.cut()
                continue
            for byte in chr(n).encode("utf-8"):
                points.add(byte, start, end)
        points.cut()
        out += points.runs
        if all(n <= 255 for n, _, _ in cells) and any(n > 127 for n, _, _ in cells):
            b = _Builder()
            for n, start, end in cells:
                b.add(n, start, end)
            b.cut()
            out += b.runs


def _bit_runs(text: str, out: list[Run]) -> None:
    for m in _BIT_RUN.finditer(text):
        at = [m.start() + i for i, c in enumerate(m.group()) if c in "01"]
        digits = "".join(text[i] for i in at)
        for lsb_first in (False, True):
            b = _Builder()
            for k in range(0, len(digits) - 7, 8):
                bits = digits[k:k + 8]
                b.add(int(bits[::-1] if lsb_first else bits, 2), at[k], at[k + 7] + 1)
            b.cut()
            out += b.runs


# NATO spelling ("Papa Echo Lima …", "X-RAY", "niner"): letters and digits, matched in any case (a word's
# case says nothing sure about its letter's).
_NATO_WORDS = {w: w[0] for w in ("alfa", "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "fox", "golf",
                                 "hotel", "india", "juliett", "juliet", "kilo", "lima", "mike", "november", "oscar",
                                 "papa", "quebec", "romeo", "sierra", "tango", "uniform", "victor", "whiskey",
                                 "whisky", "xray", "x-ray", "yankee", "zulu")}
_NATO_WORDS.update({"zero": "0", "one": "1", "two": "2", "three": "3", "tree": "3", "four": "4", "fower": "4",
                    "five": "5", "fife": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9", "niner": "9"})
_NATO_WORD = "|".join(sorted((re.escape(w) for w in _NATO_WORDS), key=len, reverse=True))
# Read over the lower-cased text (a case-blind regex costs ~10x more), which keeps offsets for ASCII.
_NATO = re.compile(rf"\b(?:{_NATO_WORD})\b(?:[ \t,;/_.-]{{1,3}}(?:{_NATO_WORD})\b){{5,}}")
_NATO_ONE = re.compile(rf"\b(?:{_NATO_WORD})\b")


def _nato(text: str, out: list[Run], lowered: str) -> None:
    if len(lowered) != len(text):
        return          # a letter that lowers to two: offsets would not line up (no NATO word needs it)
    text = lowered
    for m in _NATO.finditer(text):
        b = _Builder()
        for w in _NATO_ONE.finditer(text, m.start(), m.end()):
            word = w.group()
            b.add(ord(_NATO_WORDS[word.lower()]), w.start(), w.end())
        b.cut(caseless=True)
        out += b.runs


# Compressed streams by their magic bytes, each with a decompressor of at most `INFLATE_MAX` bytes.
_MAGIC: tuple[tuple[bytes, Callable[[], Callable[[bytes], bytes]]], ...] = (
    (b"\x1f\x8b", lambda: partial(zlib.decompressobj(wbits=31).decompress, max_length=INFLATE_MAX)),
    (b"BZh", lambda: partial(bz2.BZ2Decompressor().decompress, max_length=INFLATE_MAX)),
    (b"\xfd7zXZ\x00", lambda: partial(lzma.LZMADecompressor().decompress, max_length=INFLATE_MAX)),
)
# The same magic as base64 (either alphabet) or hex spells it: a text holding none has no compressed blob.
# Literals, each a C-speed `in` (one regex alternation cost 20x more over a log).
_COMPRESSED_HINTS = ("H4sI", "QlpoO", "QlpoN", "QlpoM", "/Td6WFo", "_Td6WFo", *(f"eJ{c}" for c in "wxyz"),
                     *(f"eN{c}" for c in "opqr"), *(f"eA{c}" for c in "EFGH"),
                     *(x for h in ("1f8b", "425a68", "fd377a", "789c", "78da", "7801") for x in (h, h.upper())))


def _compressed_hint(text: str) -> bool:
    return any(h in text for h in _COMPRESSED_HINTS)


def _zlib_header(data: bytes) -> bool:
    return len(data) > 2 and data[0] & 0x0F == 8 and data[0] >> 4 <= 7 and (data[0] << 8 | data[1]) % 31 == 0


def inflated(data: bytes) -> bytes | None:
    """What a compressed stream at the start of `data` holds (as much as inflates, bounded), or None."""
    makers = [make for magic, make in _MAGIC if data.startswith(magic)]
    if not makers and _zlib_header(data):
        makers.append(lambda: partial(zlib.decompressobj().decompress, max_length=INFLATE_MAX))
    try:
        return makers[0]()(data) or None if makers else None
    except (zlib.error, OSError, EOFError, lzma.LZMAError, ValueError):
        return None


def _inflate(runs: list[Run]) -> list[Run]:
    """A run per run that holds a compressed stream: its inflated bytes, each spelled by the whole run."""
    out: list[Run] = []
    for run in runs:
        data = inflated(run.data)
        if data is not None and len(data) >= MIN_BYTES:
            start, end = run.starts[0], run.ends[-1]
            out.append(Run(data, [start] * len(data), [end] * len(data), [-1] * len(data)))
    return out


# Cheap tests for whether a reader can find anything at all: most texts hold no dump.
_MAY_DUMP = re.compile(rf"[{_HEX}]{{2}}[ \t:,-]{{1,4}}[{_HEX}]{{2}}|0[xX][{_HEX}]{{2}}0[xX]"
                       rf"|\\x[{_HEX}]{{2}}|\\[0-7]{{3}}|[uU]\+[{_HEX}]{{4}}"
                       r"|\d[ \t]*,[ \t\r\n]*-?\d|^[!-M][ -`]{4,60}$|[01]{8} [01]{8}"
                       r"|^(?:\d{7})?[ \t]+-?\d{1,3}[ \t]+-?\d"
                       r"|^(?:[0-7]{7})?(?:   [^\s\\]|  \\[0abfnrtv]){2}|[01]{16}|\d{2,7}[ \t]{1,3}\d{2,7}[ \t]{1,3}\d",
                       re.M)
_MAY_NATO = re.compile(r"(?:alfa|alpha|bravo|charlie|delta|echo|foxtrot|golf|hotel|india|juliet|kilo|lima|mike"
                       r"|november|oscar|papa|quebec|romeo|sierra|tango|uniform|victor|whiske?y|x-?ray|yankee|zulu)"
                       r"[ \t,;/_.-]")      # over the lower-cased text


def _maybe_nato(text: str, out: list[Run]) -> None:
    lowered = text.lower()
    if _MAY_NATO.search(lowered):
        _nato(text, out, lowered)


_PRINTABLE = re.compile(rb"[\t\n\r -~]{16,}")


def _nested(runs: list[Run], depth: int) -> list[Run]:
    """What a run that spells printable text spells in turn, once (`base64 | base64`, hex of base64,
    a dump of a dump): each inner byte maps to the outer bytes that spelled it."""
    out: list[Run] = []
    if depth:
        return out
    for run in runs:
        for m in _PRINTABLE.finditer(run.data):
            at = m.start()
            for inner in byte_runs(m.group().decode("latin-1"), True, depth + 1):
                out.append(Run(inner.data, [run.starts[at + s] for s in inner.starts],
                               [run.ends[at + e - 1] for e in inner.ends], [-1] * len(inner.data), inner.caseless))
    return out


def byte_runs(text: str, blobs: bool = True, depth: int = 0) -> list[Run]:
    """Every run of bytes a dump in `text` spells (see the module's list of layouts), what a compressed
    stream in any of them inflates to, and what a run of printable text spells in turn (one level).
    `blobs=False` leaves out whole base64 and hex blobs (stream masking's value pass reads those as
    encodings) but keeps what they spell in turn: compressed, nested or reversed."""
    if len(text) < MIN_BYTES:
        return []
    out: list[Run] = []
    if blobs:
        _blobs(text, out)
    else:
        blob_runs: list[Run] = []
        back_runs: list[Run] = []
        _blobs(text, blob_runs, back_runs)
        blob_runs += back_runs
        out += back_runs + _inflate(blob_runs) + _nested(blob_runs, depth)
    if not _MAY_DUMP.search(text):
        _maybe_nato(text, out)
        return out + _inflate(out) + _nested(out, depth) if blobs else out
    _xxd(text, out)
    _xxd(text, out, little=True)
    _xxd(text, out, _XXD_BITS, _bit_groups)
    _numbers(text, out)
    _spaced_numbers(text, out)
    _bit_runs(text, out)
    _maybe_nato(text, out)
    _tables(text, out)
    _od_c(text, out)
    _lists(text, out)
    if "\\" in text:
        _byte_strings(text, out)
    if "+" in text:
        _code_points(text, out)
    _uu(text, out)
    return out + _inflate(out) + _nested(out, depth)


def needle_bytes(value: str) -> list[bytes]:
    """The byte strings a value is looked for in a dump as: UTF-8 and UTF-16 in both orders."""
    if len(value) < MIN_BYTES:
        return []
    return list(dict.fromkeys(value.encode(enc, "surrogatepass") for enc in ("utf-8", "utf-16-le", "utf-16-be")))


class ByteNeedles(Generic[T]):
    """Values' byte strings (`needle_bytes`) searched in every run a dump in the text spells:
    find(text) -> (payload, start, end) in the text, for the redactor and the leak gate alike."""

    def __init__(self, needles: Mapping[bytes, T]) -> None:
        self._payloads = list(needles.values())
        self._ac = ahocorasick_rs.BytesAhoCorasick(list(needles), matchkind=ahocorasick_rs.MatchKind.Standard) \
            if needles else None
        self._lower: ahocorasick_rs.BytesAhoCorasick | None = None      # made on the first caseless run
        self._needles = list(needles)

    def _caseless(self) -> ahocorasick_rs.BytesAhoCorasick:
        if self._lower is None:
            self._lower = ahocorasick_rs.BytesAhoCorasick([n.lower() for n in self._needles],
                                                          matchkind=ahocorasick_rs.MatchKind.Standard)
        return self._lower

    def find(self, text: str, blobs: bool = True) -> list[tuple[T, int, int]]:
        if self._ac is None:
            return []
        out: list[tuple[T, int, int]] = []
        for run in byte_runs(text, blobs):
            ac, data = (self._caseless(), run.data.lower()) if run.caseless else (self._ac, run.data)
            for i, start, end in ac.find_matches_as_indexes(data, overlapping=True):
                payload = self._payloads[i]
                out.append((payload, run.starts[start], run.ends[end - 1]))
                # What the ASCII column shows of the same bytes, a span per line.
                shown = [p for p in run.shown[start:end] if p >= 0]
                for k, pos in enumerate(shown):
                    if k == 0 or pos != shown[k - 1] + 1:
                        piece = pos
                    if k == len(shown) - 1 or shown[k + 1] != pos + 1:
                        out.append((payload, piece, pos + 1))
        return out


def spans_in_dumps(text: str, scan: Callable[[str], Iterable[tuple[int, int, str]]]) -> list[tuple[int, int, str]]:
    """(start, end, rule) in `text` for every hit `scan` finds in the bytes a dump there spells (read as
    Latin-1: one character a byte, so its offsets are the run's), with the ASCII column's copy: an
    undeclared token printed by `xxd`, `hexdump -C` or `od -c` is still that token."""
    out: list[tuple[int, int, str]] = []
    for run in byte_runs(text):
        for start, end, rule in scan(run.data.decode("latin-1")):
            out.append((run.starts[start], run.ends[end - 1], rule))
            shown = [p for p in run.shown[start:end] if p >= 0]
            if shown:
                out.append((min(shown), max(shown) + 1, rule))
    return out
