"""The forms a child's output can give a known value that the value pass does not read, each undone by a
view of the stream (issue 47 §5; the export's views do the same for files):

- interleaved: NUL bytes (UTF-16 output read as UTF-8), zero-width and other format characters,
  backspaces and carriage returns, taken out;
- grouped: the characters spaced, dashed or dotted apart (`P e l i c a n`, `P-e-l-i-c-a-n`), every
  separator taken out (values compared the same way);
- escaped: every character as `\\u00XX`, `\\xXX`, `&#NN;` or `%XX`, decoded;
- case and compatibility forms: every view is read lower-cased and NFKC'd one character for one, so an
  upper-cased value (`tr a-z A-Z`) or one in full-width letters is the value;
- transforms of the value (guards/known/forms.py `variants`: reversed as `rev` prints it, rot13): searched
  as needles in every view, so a reversed value spaced apart is found too;
- base32 and base32hex runs (wrapped over lines too), decoded;
- dumps (`od -c`, `od -td1`, `xxd`, `xxd -e`, `xxd -b`, `hexdump -C`, byte lists, decimal code points, bit
  strings, NATO spelling) and compressed, nested (`base64 | base64`) or reversed (`base64 | rev`) blobs, read
  by guards/known/dumps.py;
- stream splits: each half of a value and every other character of it (`parts`), masked where they show,
  so a value dealt between stdout and stderr is masked whatever order the two pipes deliver it in.

Each view keeps, per character, where in the stream it came from, so a match hides the span that spelled
it. Values shorter than `MIN` characters are left to the value pass: in a view with its separators taken
out, a short value could be spelled by chance.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Mapping

import ahocorasick_rs

from muninn.guards.known.dumps import ByteNeedles, needle_bytes
from muninn.guards.known.forms import variants

MIN = 8
_SEPARATORS = frozenset(" \t\r\n-_.:,;|/\\'\"`")
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})|&#(\d{1,7});|&#[xX]([0-9a-fA-F]{1,6});"
                     r"|%([0-9a-fA-F]{2})")
_SURROGATE = re.compile(r"[\ud800-\udfff]+")
# base32 or base32hex, in one case, wrapped over lines at any width (`base32` wraps at 76).
_BASE32 = re.compile(r"[A-Z0-9]{16,}(?:\r?\n[A-Z0-9]{2,})*={0,6}|[a-z0-9]{16,}(?:\r?\n[a-z0-9]{2,})*={0,6}")
_WRAP = re.compile(r"[\r\n=]")
Span = tuple[int, int, str]


# ANSI escape sequences (colours, erase), NUL, backspace, carriage return and the format characters
# (Unicode's Cf: zero-width, bidi marks, soft hyphen, BOM, tags); tests/test_exec_forms.py checks the ranges.
_INVISIBLE = re.compile("(?:\x1b\\[[0-9;?]*[A-Za-z]"
                        "|[\x00\x08\r\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
                        "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
                        "\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
                        "\U000e0001\U000e0020-\U000e007f])+")


# A character a backspace overstrikes: `a\bb` shows `b` (bold `c\bc`, underline `_\bc`, man pages). Read as a
# second view beside the one that only drops the backspaces (`P\be\bl…` interleaved).
_OVERSTRUCK = re.compile("[^\x08\r\n]\x08")


def _invisible_re() -> re.Pattern[str]:
    return _INVISIBLE


_SEPARATOR_RE = re.compile("[" + re.escape("".join(_SEPARATORS)) + "]+")


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _compact(text: str) -> str:
    return "".join(c for c in text if c not in _SEPARATORS)


def _one_for_one(ch: str, changed: str) -> str:
    return changed if len(changed) == 1 else ch


def _nfkc_run(m: re.Match[str]) -> str:
    return "".join(_one_for_one(c, unicodedata.normalize("NFKC", c)) for c in m.group())


def folded(text: str) -> str:
    """`text` lower-cased and NFKC'd (full-width `Ｐ` is `P`), each character to one character, so offsets
    stay; a character that would become several (`ß`, `ﬁ`, `İ`) stays as it is."""
    if text.isascii():
        return text.lower()
    text = _NON_ASCII.sub(_nfkc_run, text)
    lowered = text.lower()
    return lowered if len(lowered) == len(text) else "".join(_one_for_one(c, c.lower()) for c in text)


def _back(text: str, drop: re.Pattern[str], at: int) -> int:
    """Where the character at `at` of the view (`text` less every match of `drop`) stands in `text`:
    walked only for a match, which is rare, so the view itself is one C-speed `sub`."""
    removed = 0
    for g in drop.finditer(text):
        if g.start() - removed > at:
            break
        removed += g.end() - g.start()
    return at + removed


def _unescaped(text: str) -> tuple[str, list[tuple[int, int]]]:
    """The text with every escape decoded; per character, the span of the stream that spelled it."""
    out: list[str] = []
    where: list[tuple[int, int]] = []
    pos = 0
    for m in _ESCAPE.finditer(text):
        for i in range(pos, m.start()):
            out.append(text[i])
            where.append((i, i + 1))
        code = next(g for g in m.groups() if g is not None)
        base = 10 if m.group(3) else 16
        try:
            point = int(code, base)
            # A lone surrogate half cannot be searched (nor be inside a value): one placeholder for it.
            out.append("\ufffd" if 0xD800 <= point <= 0xDFFF else chr(point))
        except (ValueError, OverflowError):
            out.append("\ufffd")
        where.append(m.span())
        pos = m.end()
    for i in range(pos, len(text)):
        out.append(text[i])
        where.append((i, i + 1))
    return "".join(out), where


_WORDS = re.compile(r"[A-Za-z]+(?:[ -][A-Za-z]+)*[ -]?")


def parts(value: str) -> list[str]:
    """The pieces of a value that give it away when the rest goes to the other stream (issue 47 §5,
    stream splits): each half (`printf "${v:12}" >&2; printf "${v:0:12}"`, in whichever order the two
    pipes deliver them) and every other character (`v[0::2]` to stdout, `v[1::2]` to stderr). Each is
    masked wherever it shows, alone. Only pieces of `MIN` characters or more that are not ordinary words
    (the half of a passphrase, `correct horse`, is prose before it is a piece of one)."""
    n = len(value)
    pieces = [value[:n // 2], value[n // 2:], value[:(n + 1) // 2], value[(n + 1) // 2:], value[0::2], value[1::2]]
    return [p for p in dict.fromkeys(pieces) if len(p) >= MIN and not _WORDS.fullmatch(p)]


class StreamViews:
    """Known values looked for in every view of a text: spans(text) -> [(start, end, secret id)]."""

    def __init__(self, known: Mapping[str, str]) -> None:
        values = {v: i for v, i in known.items() if len(v) >= MIN}
        # Each value and its transforms, in the folded spelling every view is read in.
        spelt = {t: i for v, i in values.items() for t in variants(v)}
        lowered = {folded(t): i for t, i in spelt.items()}
        for v, i in values.items():
            for part in parts(v):
                lowered.setdefault(folded(part), i)
        self.needles = list(lowered)
        self._ids = list(lowered.values())
        self._raw = ahocorasick_rs.AhoCorasick(list(lowered), matchkind=ahocorasick_rs.MatchKind.Standard) \
            if lowered else None
        compact = {_compact(v): i for v, i in lowered.items() if len(_compact(v)) >= MIN}
        self._compact_ids = list(compact.values())
        self._compact = ahocorasick_rs.AhoCorasick(list(compact), matchkind=ahocorasick_rs.MatchKind.Standard) \
            if compact else None
        self._dumps = ByteNeedles({b: i for t, i in spelt.items() for b in needle_bytes(t)})
        self.longest = max((len(v) for v in values), default=0)

    def __bool__(self) -> bool:
        return self._raw is not None

    @property
    def reach(self) -> int:
        """The most stream characters one view of a value can take: six per character (`\\u00XX`),
        and a dump's offsets and columns (four lines)."""
        return 6 * self.longest + 320 if self.longest else 0

    def spans(self, text: str) -> list[Span]:
        if self._raw is None or not text:
            return []
        # Undecodable bytes (kept as lone surrogates) one character for one: never inside a value.
        text = _SURROGATE.sub(lambda m: "\ufffd" * len(m.group()), text)
        low = folded(text)
        out: list[Span] = []
        # Invisible characters out, then (for values spread apart, `P\u200b e l …`) separators too.
        seen = _invisible_re().sub("", low)
        out += self._find(self._raw, self._ids, seen,
                          lambda s, e: (_back(low, _invisible_re(), s), _back(low, _invisible_re(), e - 1) + 1))
        if self._compact is not None:
            spread = _SEPARATOR_RE.sub("", seen)

            def back(s: int, e: int) -> tuple[int, int]:
                s, e = _back(seen, _SEPARATOR_RE, s), _back(seen, _SEPARATOR_RE, e - 1) + 1
                return _back(low, _invisible_re(), s), _back(low, _invisible_re(), e - 1) + 1
            out += self._find(self._compact, self._compact_ids, spread, back)
        if "\x08" in low:
            shown = _OVERSTRUCK.sub("", low)
            view = _invisible_re().sub("", shown)

            def rendered(s: int, e: int) -> tuple[int, int]:
                s, e = _back(shown, _invisible_re(), s), _back(shown, _invisible_re(), e - 1) + 1
                return _back(low, _OVERSTRUCK, s), _back(low, _OVERSTRUCK, e - 1) + 1
            out += self._find(self._raw, self._ids, view, rendered)
        if any(x in text for x in ("\\u", "\\x", "&#", "%")):
            view, where = _unescaped(text)
            out += self._find(self._raw, self._ids, folded(view), lambda s, e: (where[s][0], where[e - 1][1]))
        for m in _BASE32.finditer(text):
            body = _WRAP.sub("", m.group(0)).upper()
            for decode in (base64.b32decode, base64.b32hexdecode):
                try:
                    decoded = folded(decode(body + "=" * (-len(body) % 8)).decode("utf-8", "replace"))
                except (binascii.Error, ValueError):
                    continue
                found = self._raw.find_matches_as_indexes(decoded)
                if found:
                    out.append((m.start(), m.end(), self._ids[found[0][0]]))
                    break
        out += [(start, end, sid) for sid, start, end in self._dumps.find(text, blobs=False)]
        return out

    @staticmethod
    def _find(ac, ids: list[str], view: str, back) -> list[Span]:
        out: list[Span] = []
        for idx, start, end in ac.find_matches_as_indexes(view, overlapping=True):
            s, e = back(start, end)
            out.append((s, e, ids[idx]))
        return out


def merged(spans: list[Span]) -> list[Span]:
    """Overlapping spans as one, in text order; the first one's id names it."""
    out: list[list] = []
    for start, end, sid in sorted(spans):
        if out and start < out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end, sid])
    return [(s, e, i) for s, e, i in out]
