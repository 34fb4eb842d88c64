"""Redaction: known values first (one Aho-Corasick pass), then patterns.

    r = Redactor.from_files([Path("secrets.yaml"), Path(".env")])
    out = r.redact(text)          # out.text, out.hits (secret ids and rules, never values)

A known value becomes `[REDACTED:<secret id>]`, a pattern hit `[REDACTED:<rule>]`. The value pass
comes first because a bare value with no label in front of it (a bot token in a table cell) is
invisible to every pattern; it is what leaked in the seed project.

Deliberately not redacted (the prose corpus in tests/planted.py pins it): host names, IPs, versions,
ticket keys, UUIDs, dates, paths, e-mail addresses, unquoted commit hashes, `$VARS`, `<placeholders>`,
and words like password or token in prose. A quoted hex string of ≥ 8 characters is redacted by
detect-secrets' hex-entropy plugin, commit hashes in JSON included: accepted, because 32-hex API
keys look exactly like that.

This module is the one redaction path shared by the exporter, the MCP outputs, the audit log and
stream masking (`guards/redact/mask.py`). The leak gate (`guards/gate/leak_gate.py`) deliberately does not use
it: a second opinion must not share the first one's bugs.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import ahocorasick_rs

from muninn.core.config import Encoding
from muninn.guards.known import secret_values
from muninn.guards.known.dumps import spans_in_dumps
from muninn.guards.known.forms import (
    ENCODINGS,
    TRANSFORMS,
    ByteNeedles,
    escape_end,
    forms_of,
    needle_bytes,
    needle_views,
    text_views,
)
from muninn.guards.redact.allowlist import Allowlist
from muninn.guards.redact.patterns import PatternScanner

__all__ = ["ENCODINGS", "Encoding", "Hit", "Redacted", "Redactor", "encoded_forms", "marker"]
# A value cut at a boundary (a title cut at 80 characters) keeps a prefix: one this long is hidden.
CUT_MIN = 6
PATH_MARKER = "redacted"
VIEWED = frozenset({"raw", *TRANSFORMS})   # needles the normalised and folded views search for
DFA_MAX_NEEDLES = 2_000   # see Redactor.__init__: above this the DFA's build costs more than its search saves
# Line breaks a value may be wrapped over (PEM, base64(1), `xxd -p`, a terminal): see _spans.
_BREAKS = re.compile(rb"[\r\n]")


@dataclass(frozen=True)
class Hit:
    """Where something was redacted, in the input text's character offsets. Never the value."""

    secret_id: str  # the known secret's id; for a pattern hit, the rule name
    kind: Literal["value", "pattern"]
    rule: str       # the encoding for values ("raw", "base64", ...); the rule name (`ds:<Plugin>` for detect-secrets)
    start: int
    end: int


@dataclass
class Redacted:
    text: str
    hits: list[Hit] = field(default_factory=list)

    @property
    def secret_ids(self) -> list[str]:
        return sorted({h.secret_id for h in self.hits if h.kind == "value"})


def marker(name: str) -> str:
    return f"[REDACTED:{name}]"


def encoded_forms(value: str, encodings: Sequence[Encoding]) -> dict[str, Encoding]:
    """Every needle for `value` in `encodings` (the shared table: `guards/known/forms.py`)."""
    return forms_of(value, encodings)


@dataclass
class Tables:
    """What a Redactor searches for, made from the known values in Python (every encoded form, view and
    dump of each): the part of its build that grows with the values. The automata are built from it."""

    needles: list[tuple[str, str, str]]    # (form, secret id, encoding), raw forms first
    view: dict[str, int]                   # normalised view of a raw value -> its needle's index
    fold: dict[str, int]                   # folded view (case, confusables) -> index
    dumped: dict[bytes, int]               # the value's bytes as a dump spells them -> index
    heads: dict[str, list[int]]            # the first CUT_MIN characters -> indexes (cut prefixes)
    views: bool

    @classmethod
    def of(cls, known: Mapping[str, str], encodings: Sequence[Encoding], views: bool) -> Tables:
        needles: dict[str, tuple[str, Encoding]] = {}
        # Raw forms first, so a needle that is both one value and another's encoding keeps the raw id.
        for value, secret_id in known.items():
            if value and "raw" in encodings:
                needles.setdefault(value, (secret_id, "raw"))
        for value, secret_id in known.items():
            if value:
                for form, enc in encoded_forms(value, encodings).items():
                    needles.setdefault(form, (secret_id, enc))
        # Views hold raw values and their transforms (reversed, rot13: `forms.TRANSFORMS`) only: a split
        # base64 form is not worth 5x the automaton.
        viewed = [(i, n) for i, (n, (_, enc)) in enumerate(needles.items()) if enc in VIEWED]
        raw = [(i, n) for i, n in viewed if needles[n][1] == "raw"]
        # Cut prefixes: an automaton over the first CUT_MIN characters of each value finds where a
        # prefix may start; a bisect per line end would cost ~1 ms a line with 10,000 values.
        heads: dict[str, list[int]] = {}
        for i, n in raw if views else []:
            if len(n) > CUT_MIN:
                heads.setdefault(n[:CUT_MIN], []).append(i)
        # `None` keys (a view too short to be one) are dropped here, not by the automaton's owner.
        return cls(needles=[(form, sid, enc) for form, (sid, enc) in needles.items()],
                   view={v: i for i, n in viewed for v in needle_views(n) if v} if views else {},
                   fold={v: i for i, n in viewed for v in needle_views(n, fold=True) if v},
                   dumped={b: i for i, n in viewed for b in needle_bytes(n)} if views else {},
                   heads=heads, views=views)


class Redactor:
    """Redacts known values (`known`: value -> secret id) and, with `patterns`, pattern hits.

    `encodings` adds the encoded forms of every value (`guards/known/forms.py`); stream masking uses
    `Redactor(known, patterns=False, encodings=ENCODINGS)`. Export also turns on `views`: values
    are matched on the normalised view too (split by markup, invisible characters or a wrap), and a
    text that ends (or a line that ends, or stops at `…`) in a prefix of a value hides the prefix.
    """

    def __init__(self, known: Mapping[str, str], patterns: bool = True,
                 encodings: Sequence[Encoding] = ("raw",), *, scanner: PatternScanner | None = None,
                 views: bool = False, allow: Callable[[str, str], bool] | None = None,
                 tables: Tables | None = None) -> None:
        """`tables`: `Tables.of(known, encodings, views)` made earlier (guards/redact/cache.py keeps them
        sealed between processes); the automata are built from them here either way."""
        t = tables if tables is not None else Tables.of(known, encodings, views)
        self._ids = [(secret_id, enc) for _, secret_id, enc in t.needles]
        self._needle_text = [form for form, _, _ in t.needles]
        self._markers = [marker(secret_id) for secret_id, _ in self._ids]
        # Bytes, not str: ahocorasick-rs is faster on bytes (64 vs 38 MB/s measured). A DFA searches
        # prose ~3.5x faster than the contiguous NFA (91 vs 26 MB/s, overlapping) but its build grows
        # much faster: 0.2 s against 0.02 s for 2,000 needles, 3.0 s against 0.4 s for 12,000 (2,000
        # values in every export form), where it would pay back only past ~90 MB of text. So a DFA
        # only up to DFA_MAX_NEEDLES.
        # Standard + overlapping: two known values that overlap in the text (`abc123XYZ` and
        # `XYZ789`) are both found and merged.
        self._ac = ahocorasick_rs.BytesAhoCorasick(
            [n.encode() for n in self._needle_text],
            matchkind=ahocorasick_rs.MatchKind.Standard,
            implementation=ahocorasick_rs.Implementation.DFA if len(self._needle_text) <= DFA_MAX_NEEDLES
            else ahocorasick_rs.Implementation.ContiguousNFA,
        ) if self._needle_text else None
        self.longest = max((len(n) for n in self._needle_text), default=0)
        self._multiline = any("\n" in n or "\r" in n for n in self._needle_text)
        # The most characters one match can cover: a value wrapped with a line break (\r\n at worst)
        # after every character. Stream masking holds this much back between reads.
        self.reach = 3 * self.longest
        self.scanner = scanner if scanner is not None else (PatternScanner() if patterns else None)
        self.views = t.views
        # The owner's allowlist (guards/redact/allowlist.py): (rule, matched text) -> allowed. Pattern hits
        # only: the value pass never asks it.
        self.allow = allow
        self._view = _Needles(t.view) if t.views else None
        self._fold = _Needles(t.fold)
        self._bytes = ByteNeedles(t.dumped) if t.views else None
        self._heads = list(t.heads.values())
        self._tails: dict[str, int] | None = None if t.views else {}     # value suffixes, made on first use
        self._head_ac = ahocorasick_rs.AhoCorasick(list(t.heads), matchkind=ahocorasick_rs.MatchKind.Standard) \
            if t.heads else None

    @classmethod
    def for_facts(cls, known: Mapping[str, str], allowlist: Allowlist | None = None, *,
                  scanner: PatternScanner | None = None, tables: Tables | None = None) -> Redactor:
        """What becomes a fact file: the exporter's text and what an agent writes through MCP. Every
        form of the table, the normalised view and cut prefixes; pattern hits the owner allowed
        (guards/redact/allowlist.py) stay, known values never do. One constructor, so a reader of an exported
        file and of a remembered one sees the same text."""
        return cls(known, patterns=True, encodings=ENCODINGS, views=True, scanner=scanner, tables=tables,
                   allow=allowlist.redactor_allow() if allowlist is not None else None)

    @classmethod
    def from_files(cls, paths: Iterable[Path], patterns: bool = True,
                   encodings: Sequence[Encoding] = ("raw",)) -> Redactor:
        return cls(secret_values.collect(paths), patterns=patterns, encodings=encodings)

    def __len__(self) -> int:
        return len(self._needle_text)

    def contains_known(self, text: str) -> list[str]:
        """Secret ids whose value (in any configured encoding) occurs in `text`; cheap, for gates."""
        if self._ac is None:
            return []
        return sorted({self._ids[i][0] for i, _, _ in self._spans(text.encode("utf-8", "surrogatepass"))})

    def redact(self, text: str) -> Redacted:
        out = self._value_pass(text)
        if self.scanner is not None:
            out = self._pattern_pass(out)
        return out

    def redact_dumped(self, text: str) -> str:
        """`text` (redacted already) with every pattern hit in the bytes a dump there spells hidden: an
        undeclared token printed by `xxd`, `hexdump -C` or `od -c` is still that token. The one reading
        of dumps for the observation hook and the observations export source alike."""
        if self.scanner is None or not text:
            return text
        scanner = self.scanner
        spans = spans_in_dumps(text, lambda d: [(h.start, h.end, h.rule) for h in scanner.scan(d)])
        merged: list[list] = []
        for start, end, rule in sorted(spans):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end, rule])
        for start, end, rule in reversed(merged):
            text = text[:start] + marker(f"{rule}-in-dump") + text[end:]
        return text

    def redact_values(self, text: str) -> Redacted:
        """The value pass alone (what `mask.py` and the benchmarks call)."""
        return self._value_pass(text)

    def redact_path(self, path: str) -> str:
        """A path or id with every case, slug and separator variant of a value replaced by
        `redacted` (path-safe). Compared on the folded view (`forms.folded`); `/` is kept."""
        spans = self._fold.find(path, fold=True)
        if not spans:
            return path
        pieces: list[str] = []
        pos = 0
        for _, start, end in spans:
            pieces.append(path[pos:start])
            pieces.append("/".join(PATH_MARKER if part else "" for part in path[start:end].split("/")))
            pos = end
        pieces.append(path[pos:])
        return "".join(pieces)

    def _spans(self, data: bytes) -> list[tuple[int, int, int]]:
        """(needle index, start, end) in `data`, in order, not overlapping. Text with line breaks is
        searched with the breaks taken out, so a value wrapped over lines (PEM at 64 columns,
        base64(1) at 76, `xxd -p` at 60, a terminal at any width) is found like one on a single line;
        a value that holds line breaks itself is searched as it stands too. Overlaps are merged, so
        no part of either value is left showing."""
        assert self._ac is not None
        if b"\n" not in data and b"\r" not in data:
            return _merge(self._ac.find_matches_as_indexes(data, overlapping=True))
        joined = self._ac.find_matches_as_indexes(data.replace(b"\n", b"").replace(b"\r", b""), overlapping=True)
        spans = self._ac.find_matches_as_indexes(data, overlapping=True) if self._multiline else []
        if joined:
            # Break i sits before joined offset breaks[i] - i; joined offset j is raw j + (breaks up to it).
            kept = [m.start() - i for i, m in enumerate(_BREAKS.finditer(data))]
            spans += [(idx, start + bisect_right(kept, start), end + bisect_right(kept, end - 1))
                      for idx, start, end in joined]
        return _merge(spans)

    def _char_spans(self, text: str) -> list[tuple[int, int, int]]:
        """The raw pass's spans in character offsets of `text`."""
        # surrogatepass: text decoded with surrogateescape (a child's raw output) still round-trips;
        # a lone surrogate's bytes (ED A0–BF ..) never occur inside a valid UTF-8 needle.
        data = text.encode("utf-8", "surrogatepass")
        matches = self._spans(data)
        if not matches or len(data) == len(text):
            return matches
        out: list[tuple[int, int, int]] = []
        pos = cpos = 0
        for idx, start, end in matches:
            cpos += len(data[pos:start].decode("utf-8", "surrogatepass"))
            cend = cpos + len(data[start:end].decode("utf-8", "surrogatepass"))
            out.append((idx, cpos, cend))
            pos, cpos = end, cend
        return out

    def _value_pass(self, text: str) -> Redacted:
        if self._ac is None:
            return Redacted(text)
        spans = self._char_spans(text)
        if self._view is not None:
            # A value renamed into a file name comes back in the text too ("from runbooks/zq7-kp2x.md"):
            # the folded view (any case, slug or separator spelling) runs over text when views are on.
            extra = self._view.find(text) + self._fold.find(text, fold=True) + self._cut_spans(text)
            extra += self._tail_spans(text)
            extra += self._bytes.find(text) if self._bytes is not None else []
            if extra:
                spans = _merge(spans + extra)
        if not spans:
            return Redacted(text)
        pieces: list[str] = []
        hits: list[Hit] = []
        pos = 0
        for idx, start, end in spans:
            pieces.append(text[pos:start])
            secret_id, enc = self._ids[idx]
            pieces.append(self._markers[idx])
            hits.append(Hit(secret_id, "value", enc, start, end))
            pos = end
        pieces.append(text[pos:])
        return Redacted("".join(pieces), hits)

    def _cut_spans(self, text: str) -> list[tuple[int, int, int]]:
        """A prefix of a value at the end of the text, of a line, or before `…`: what a cut keeps.
        Prefixes of ordinary words are left alone (`correct horse` is words before it is a prefix of
        a declared phrase); `EEsAoC` (capitals inside) is not a word."""
        if self._head_ac is None:
            return []
        found = self._head_ac.find_matches_as_indexes(_SURROGATE.sub("\ufffd", text), overlapping=True)
        if not found:
            return []
        ends = sorted({len(text), *(m.start() for m in _CUT_AT.finditer(text))})
        out: list[tuple[int, int, int]] = []
        for head, start, _ in found:
            at = bisect_left(ends, start + CUT_MIN)
            if at == len(ends):
                continue
            end = ends[at]
            tail = text[start:end]
            for idx in self._heads[head]:
                if self._needle_text[idx].startswith(tail) and not _wordy(tail):
                    out.append((idx, start, end))
                    break
        return out

    def _tail_spans(self, text: str) -> list[tuple[int, int, int]]:
        """The rest of a value at the start of the text or of a line, the mirror of `_cut_spans`: a value
        cut in two places (`echo <first half>` in a call's input, the second half its output; a title
        cut, its body going on) leaves a prefix one place and this suffix the other. Ordinary words
        are left alone, as there."""
        if self._tails is None:
            self._tails = {}
            for idx, (form, (_, enc)) in enumerate(zip(self._needle_text, self._ids, strict=True)):
                if enc == "raw":
                    for k in range(1, len(form) - CUT_MIN + 1):
                        self._tails.setdefault(form[k:], idx)
        if not self._tails:
            return []
        out: list[tuple[int, int, int]] = []
        for m in _LINE_HEAD.finditer(text):
            token = m.group(1)
            for word in dict.fromkeys((token, token.rstrip(".,;:!?)]}'\"`"))):
                idx = self._tails.get(word)
                if idx is not None and not _wordy(word):
                    out.append((idx, m.start(1), m.start(1) + len(word)))
                    break
        return out

    def _pattern_pass(self, first: Redacted) -> Redacted:
        assert self.scanner is not None
        text = first.text
        spans = self.scanner.scan(text)
        if spans and self.allow is not None:
            # Spans touching a value marker were dropped by scan(): a span's text is the input's own.
            spans = [s for s in spans if not self.allow(s.rule, text[s.start:s.end])]
        if not spans:
            return first
        # Pattern offsets refer to the value-redacted text; map them back to the input so every
        # Hit uses the caller's coordinates.
        to_input = _input_mapper(first)
        pieces: list[str] = []
        hits = list(first.hits)
        pos = 0
        for span in spans:
            pieces.append(text[pos:span.start])
            pieces.append(marker(span.rule))
            hits.append(Hit(span.rule, "pattern", span.rule, to_input(span.start), to_input(span.end)))
            pos = span.end
        pieces.append(text[pos:])
        hits.sort(key=lambda h: h.start)
        return Redacted("".join(pieces), hits)


_WORD = re.compile(r"[^\W\d_]?[^\W\d_A-Z]*|[^\W\d_a-z]+")


def _wordy(text: str) -> bool:
    """Ordinary words only (`correct horse`, `Staple`): letters, capitalised at most at the start."""
    return all(_WORD.fullmatch(w) for w in text.split(" "))


_CUT_AT = re.compile(r"[ \t]*(?:\r?\n|…|\.\.\.)")
# The first word of the text and of each line (after indentation, a quote or `…`).
_LINE_HEAD = re.compile(r"(?:^|\n)[ \t>\"'`(\[]*(?:…|\.\.\.)?(\S{" + str(CUT_MIN) + ",})")


class _Needles:
    """An Aho-Corasick automaton over needles in one view (normalised or folded) of the text;
    matches are mapped back to the original text through the view's offset map."""

    def __init__(self, needles: dict[str | None, int]) -> None:
        kept = {n: i for n, i in needles.items() if n}   # None: too short for a view
        self._index = list(kept.values())
        self._ac = ahocorasick_rs.AhoCorasick(list(kept), matchkind=ahocorasick_rs.MatchKind.Standard) \
            if kept else None

    def find(self, text: str, fold: bool = False) -> list[tuple[int, int, int]]:
        """Matches in each view of `text` (`forms.text_views`), mapped back through the view's offset
        map (built only on a match)."""
        if self._ac is None or not text:
            return []
        spans: list[tuple[int, int, int]] = []
        for view_of, mapped in text_views(text, fold):
            found = self._ac.find_matches_as_indexes(_SURROGATE.sub("\ufffd", view_of(text)), overlapping=True)
            if found:
                where = mapped(text)[1]
                spans += [(self._index[i], where[start], escape_end(text, where[end - 1])) for i, start, end in found]
        return _merge(spans)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _merge(spans: Iterable[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Sorted, overlapping spans merged (the first needle names the union)."""
    merged: list[tuple[int, int, int]] = []
    for idx, start, end in sorted(spans, key=lambda s: (s[1], -s[2])):
        if merged and start < merged[-1][2]:
            last = merged[-1]
            merged[-1] = (last[0], last[1], max(last[2], end))
        else:
            merged.append((idx, start, end))
    return merged


def _input_mapper(first: Redacted) -> Callable[[int], int]:
    """Maps an offset in the value-redacted text (never inside a marker) to the input text."""
    ends: list[int] = []    # where each marker ends in the redacted text
    deltas: list[int] = []  # input offset minus redacted offset after that marker
    grown = 0
    for h in first.hits:
        size = len(marker(h.secret_id))
        ends.append(h.start + grown + size)
        grown += size - (h.end - h.start)
        deltas.append(-grown)

    def to_input(pos: int) -> int:
        i = bisect_right(ends, pos)
        return pos + (deltas[i - 1] if i else 0)

    return to_input
