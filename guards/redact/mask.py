"""Masking a child's stdout/stderr as it streams, so no known secret value reaches the reader.

Matching is the redactor's value pass (`guards/redact/redactor.py`, one Aho-Corasick pass, no patterns:
a pattern has no bounded length, so it cannot be matched safely across reads). This module adds
only the streaming:

- A pipe delivers bytes in arbitrary pieces: a value can arrive as `abc` then `def`. Each read
  keeps back the last (longest match - 1) characters; a needle that starts in the released part
  is then always complete, so it is masked whole. A match running past the cut moves the cut to
  its end. At EOF (`flush`) the rest goes out, masked, with or without a trailing newline.
- Bytes are decoded as UTF-8 with `surrogateescape`: binary output passes through unchanged
  apart from masked spans, and a multi-byte character split across reads is reassembled.

What is masked (best effort; the one table of forms is `guards/known/forms.py`, shared with export
redaction and the leak gate):
- raw: the value exactly as stored;
- base64 (standard and URL-safe) at the three byte alignments a value can sit at inside a longer
  encoded blob; the 1-2 characters at each edge that mix in neighbouring bytes stay visible;
- url: `quote` / `quote_plus` percent-encoding;
- hex: lower and upper case;
- json: the value inside a JSON string (`\\"`, `\\\\`, `\\uXXXX` escapes);
- shell: the value as bash prints it back (`printf %q`, `declare -p`, `${x@Q}`, `shlex.quote`);
- any of these wrapped over lines at any width (PEM, `base64`, `xxd -p`, a terminal), `\\n` or
  `\\r\\n`: the value pass also matches with line breaks taken out, and the hold-back covers a
  value with a break after every character (`Redactor.reach`).
Then the stream's views (guards/redact/stream_views.py, issue 47 §5): UTF-16, zero-width characters,
backspaces, characters grouped or spaced apart, every character escaped (`\\u00XX`, `\\xXX`, `&#NN;`,
`%XX`), any case, full-width letters, reversed and rot13 (in every view), base32 and base32hex (wrapped
too), dumps (`od -c`, `od -td1`, `xxd`, `xxd -b`, `hexdump -C`, byte lists) and compressed blobs. The hold-back grows to
the longest view (six characters a value character, and a dump's columns): the last few hundred
characters of a stream wait for the next read or EOF. When stdout and stderr go to two places, one
`JointMasker` reads both in arrival order, so a value split between them is whole when matched.
Since issue 47 pass 3 the byte reader also reads decimal code points, bit strings, NATO spelling, `xxd -e`,
`base64 | rev` and one blob inside another; a backspace overstrike is read as a terminal renders it; each
half of a value and every other character of it are masked wherever they show (a value dealt between the
two streams). docs/security.md lists the exec forms. Not caught: encryption, a compressed blob longer than
the hold-back (read only as far as it has arrived), a value truncated or with other text interleaved.
"""

from __future__ import annotations

import codecs
import re
import threading
from collections.abc import Mapping, Sequence
from typing import BinaryIO

from muninn.guards.redact.redactor import ENCODINGS, Encoding, Hit, Redacted, Redactor, marker
from muninn.guards.redact.stream_views import StreamViews, folded, merged

_SURROGATES = re.compile(r"[\udc80-\udcff]+")


class MaskingRedactor(Redactor):
    """The value pass of stream masking, with the stream's views of the same values (stream_views.py)."""

    def __init__(self, known: Mapping[str, str], encodings: Sequence[Encoding]) -> None:
        super().__init__(known, patterns=False, encodings=tuple(encodings))
        self.stream_views = StreamViews(known)
        # Every needle of both, folded and joined, so "is this a piece of one" is one C-level search.
        self._pieces = "\0".join(folded(n) for n in (*self._needle_text, *self.stream_views.needles))

    def is_piece(self, text: str) -> bool:
        """Whether `text` (folded, ≥ 2 characters) is part of a form of a known value: one half of a
        value split over two places."""
        low = folded(text)
        return len(low) >= 2 and "\0" not in low and low in self._pieces


def holds_known(redactor: Redactor, text: str) -> bool:
    """Whether `text` holds a known value in any form masking reads (the value pass and the views)."""
    return bool(_spans(redactor, text))


def masking_redactor(known: Mapping[str, str], encodings: Sequence[Encoding] = ENCODINGS) -> Redactor:
    """The redactor stream masking uses: values and their encodings, no patterns; and the stream's views."""
    return MaskingRedactor(known, encodings)


def _spans(redactor: Redactor, text: str) -> list[tuple[int, int, str]]:
    """Every span to hide in `text`: the value pass, then the stream's views, merged."""
    found = [(h.start, h.end, h.secret_id) for h in _redact(redactor, text).hits]
    views = getattr(redactor, "stream_views", None)
    if views:
        found += views.spans(text)
    return merged(found)


def _hold(redactor: Redactor) -> int:
    views = getattr(redactor, "stream_views", None)
    return max(redactor.reach - 1, views.reach if views else 0, 0)


def _redact(redactor: Redactor, text: str) -> Redacted:
    """The value pass, tolerating undecodable bytes (kept as lone surrogates, never inside a value)."""
    # A strict encode is a C-speed "no undecodable bytes here" test (a regex search cost half the time).
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return redactor.redact_values(text)
    pieces: list[str] = []
    hits: list[Hit] = []
    pos = 0
    for gap in [*_SURROGATES.finditer(text), None]:
        end = gap.start() if gap else len(text)
        part = redactor.redact_values(text[pos:end])
        pieces.append(part.text)
        hits += [Hit(h.secret_id, h.kind, h.rule, h.start + pos, h.end + pos) for h in part.hits]
        if gap:
            pieces.append(gap.group())
            pos = gap.end()
    return Redacted("".join(pieces), hits)


class StreamMasker:
    """feed(bytes) -> masked bytes to write now; flush() -> the rest at EOF. One per stream."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self.hold = _hold(redactor)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
        self._pending = ""
        self.hits: list[str] = []

    def feed(self, data: bytes) -> bytes:
        text = self._pending + self._decoder.decode(data)
        if len(text) <= self.hold:
            self._pending = text
            return b""
        out, cut = _release(text, len(text) - self.hold, _spans(self.redactor, text), self.hits)
        self._pending = text[cut:]
        return out.encode("utf-8", "surrogateescape")

    def flush(self) -> bytes:
        text = self._pending + self._decoder.decode(b"", final=True)
        self._pending = ""
        out, _ = _release(text, len(text), _spans(self.redactor, text), self.hits)
        return out.encode("utf-8", "surrogateescape")


def _release(text: str, cut: int, spans: list[tuple[int, int, str]], hits: list[str]) -> tuple[str, int]:
    """(text[:cut'] masked, cut'): a span that starts before the cut is complete (the hold covers the
    longest form), so the cut moves to its end and it goes out whole."""
    out: list[str] = []
    pos = 0
    for start, end, secret_id in spans:
        if start >= cut:
            break
        cut = max(cut, end)
        out += [text[pos:start], marker(secret_id)]
        pos = end
        hits.append(secret_id)
    out.append(text[pos:cut])
    return "".join(out), cut


class JointMasker:
    """Two streams (stdout, stderr) masked as one text in the order their bytes arrived, so a value
    written half to each is whole when matched; each masked character still goes to its own stream (a
    masked span's marker to the stream it began on). feed() and finish() are called from one thread per
    stream: they write to the outputs themselves, under one lock."""

    def __init__(self, redactor: Redactor, outputs: Sequence[BinaryIO]) -> None:
        self.redactor = redactor
        self.hold = _hold(redactor)
        self.outputs = list(outputs)
        self._decoders = [codecs.getincrementaldecoder("utf-8")(errors="surrogateescape") for _ in outputs]
        self._text = ""
        self._tags: list[int] = []
        self._reads: list[int] = []     # per character, which feed() brought it (where two pieces meet)
        self._count = 0
        self._open = set(range(len(outputs)))
        self._dead: set[int] = set()
        self._lock = threading.Lock()
        self.hits: list[str] = []

    def feed(self, stream: int, data: bytes) -> None:
        """Raises BrokenPipeError once this stream's reader has gone: its pump stops reading, and the
        child meets the closed pipe (SIGPIPE) instead of writing into a pipe nobody reads."""
        with self._lock:
            piece = self._decoders[stream].decode(data)
            self._add(stream, piece)
            if len(self._text) > self.hold:
                self._release(len(self._text) - self.hold)
            if stream in self._dead:
                raise BrokenPipeError(f"the reader of stream {stream} went away")

    def finish(self, stream: int) -> None:
        with self._lock:
            self._add(stream, self._decoders[stream].decode(b"", final=True))
            self._open.discard(stream)
            if not self._open:
                self._release(len(self._text))

    def _add(self, stream: int, piece: str) -> None:
        self._text += piece
        self._tags += [stream] * len(piece)
        self._count += 1
        self._reads += [self._count] * len(piece)

    def _release(self, cut: int) -> None:
        text, tags = self._text, self._tags
        spans = _joint_spans(self.redactor, text, tags, self._reads)
        parts: dict[int, list[str]] = {i: [] for i in range(len(self.outputs))}
        pos = 0
        for start, end, secret_id in spans:
            if start >= cut:
                break
            cut = max(cut, end)
            self._route(text, tags, pos, start, parts)
            parts[tags[start]].append(marker(secret_id))
            self.hits.append(secret_id)
            pos = end
        self._route(text, tags, pos, cut, parts)
        self._text, self._tags, self._reads = text[cut:], tags[cut:], self._reads[cut:]
        for i, chunks in parts.items():
            if chunks and i not in self._dead:
                try:
                    self.outputs[i].write("".join(chunks).encode("utf-8", "surrogateescape"))
                    self.outputs[i].flush()
                except BrokenPipeError:
                    self._dead.add(i)       # our reader went away: the other stream still goes out

    @staticmethod
    def _route(text: str, tags: list[int], start: int, end: int, parts: dict[int, list[str]]) -> None:
        run = start
        for i in range(start + 1, end + 1):
            if i == end or tags[i] != tags[run]:
                if run < end:
                    parts[tags[run]].append(text[run:i])
                run = i


def _runs(reads: list[int]) -> list[range]:
    """The stretch each read brought, in arrival order."""
    out: list[range] = []
    start = 0
    for i in range(1, len(reads) + 1):
        if i == len(reads) or reads[i] != reads[start]:
            out.append(range(start, i))
            start = i
    return out


def _joint_spans(redactor: Redactor, text: str, tags: list[int], reads: list[int]) -> list[tuple[int, int, str]]:
    """Spans to hide in the joint text, also where two streams' reads reached us in the other order than
    they were written: one reader thread per pipe, so `printf A; printf B >&2` can arrive as B then A.
    Each view swaps neighbouring reads of two streams (pairs from the first read, then from the second); a
    match there hides everything between its first and last character in the joint text. Two more views
    put one stream's text whole before the other's. A value cut into several pieces that arrive more than
    one read out of order on both sides is not put back together."""
    found = _spans(redactor, text)
    if len(set(tags)) < 2:
        return found
    runs = _runs(reads)
    orders: list[list[int]] = []
    for first in (0, 1):
        order: list[range] = list(runs[:first])
        for i in range(first, len(runs), 2):
            pair = runs[i:i + 2]
            swap = len(pair) == 2 and tags[pair[0].start] != tags[pair[1].start]
            order += pair[::-1] if swap else pair
        orders.append([j for r in order for j in r])
    # Each stream whole, then the other: a piece several reads late is beside its other half again.
    apart = [[j for j, t in enumerate(tags) if t == stream] for stream in (0, 1)]
    orders += [apart[0] + apart[1], apart[1] + apart[0]]
    for where in orders:
        view = "".join(text[j] for j in where)
        for start, end, sid in _spans(redactor, view):
            picked = where[start:end]
            found.append((min(picked), max(picked) + 1, sid))
    return merged(found)


def mask_bytes(redactor: Redactor, chunks: Sequence[bytes]) -> bytes:
    """Mask a whole sequence of reads (tests and benchmarks)."""
    masker = StreamMasker(redactor)
    return b"".join(masker.feed(c) for c in chunks) + masker.flush()
