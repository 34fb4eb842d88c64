"""Masking a child's stdout/stderr as it streams, so no known secret value reaches the reader.

Matching is the redactor's value pass (`guards/redact.py`, one Aho-Corasick pass, no patterns:
a pattern has no bounded length, so it cannot be matched safely across reads). This module adds
only the streaming:

- A pipe delivers bytes in arbitrary pieces: a value can arrive as `abc` then `def`. Each read
  keeps back the last (longest match - 1) characters; a needle that starts in the released part
  is then always complete, so it is masked whole. A match running past the cut moves the cut to
  its end. At EOF (`flush`) the rest goes out, masked, with or without a trailing newline.
- Bytes are decoded as UTF-8 with `surrogateescape`: binary output passes through unchanged
  apart from masked spans, and a multi-byte character split across reads is reassembled.

What is masked (best effort; the one table of forms is `guards/forms.py`, shared with export
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
Not caught: `xxd`'s offset/ASCII columns, compression, a value printed with other text
interleaved, a transformed value (reversed, truncated), and the normalised view export uses
(markup, zero-width characters): a stream has no markup, and the view's extra hold-back would
delay every line.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Mapping, Sequence

from muninn.guards.redact import ENCODINGS, Encoding, Hit, Redacted, Redactor, marker

_SURROGATES = re.compile(r"[\udc80-\udcff]+")


def masking_redactor(known: Mapping[str, str], encodings: Sequence[Encoding] = ENCODINGS) -> Redactor:
    """The redactor stream masking uses: values and their encodings, no patterns."""
    return Redactor(known, patterns=False, encodings=tuple(encodings))


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
        self.hold = max(redactor.reach - 1, 0)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
        self._pending = ""
        self.hits: list[str] = []

    def feed(self, data: bytes) -> bytes:
        text = self._pending + self._decoder.decode(data)
        if len(text) <= self.hold:
            self._pending = text
            return b""
        cut = len(text) - self.hold
        result = _redact(self.redactor, text)
        grown = 0
        for hit in result.hits:
            if hit.start >= cut:
                break
            # A needle that starts before the cut is complete (the hold covers the longest): release it whole.
            cut = max(cut, hit.end)
            grown += len(marker(hit.secret_id)) - (hit.end - hit.start)
            self.hits.append(hit.secret_id)
        self._pending = text[cut:]
        return result.text[:cut + grown].encode("utf-8", "surrogateescape")

    def flush(self) -> bytes:
        text = self._pending + self._decoder.decode(b"", final=True)
        self._pending = ""
        result = _redact(self.redactor, text)
        self.hits += [h.secret_id for h in result.hits]
        return result.text.encode("utf-8", "surrogateescape")


def mask_bytes(redactor: Redactor, chunks: Sequence[bytes]) -> bytes:
    """Mask a whole sequence of reads (tests and benchmarks)."""
    masker = StreamMasker(redactor)
    return b"".join(masker.feed(c) for c in chunks) + masker.flush()
