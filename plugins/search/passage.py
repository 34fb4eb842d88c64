"""Where to start reading a long fact: the paragraph from which the next `window` characters hold the most
of the query's words.

A cross-encoder reads 256 tokens of each candidate (about 900 characters), and the embedder as many. A
documentation section is often longer, and the answer to a question sits a median ~650 characters into it
(evals/results/corpora.md): read from the top, the model never sees it. Starting at the paragraph that
names most of the sought words, the model reads the part the question is about; a fact no longer than the
window, or one where no later paragraph names more of them than the first, is read from the top as before.
"""

from __future__ import annotations

import bisect
import functools
import re
import threading

import snowballstemmer

_PARAGRAPH = re.compile(r"\n\s*\n")
_WORD = re.compile(r"\w+", re.UNICODE)   # as query.words splits
# A snowball stemmer keeps the word it is stemming in itself: one per thread, for search --batch's threads.
_STEMMERS = threading.local()


@functools.lru_cache(maxsize=65_536)
def _stem(word: str) -> str:
    if (stemmer := getattr(_STEMMERS, "english", None)) is None:
        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    return stemmer.stemWord(word)


def paragraph_starts(text: str) -> list[int]:
    """Offsets where a paragraph begins (the first is 0)."""
    return [0, *(m.end() for m in _PARAGRAPH.finditer(text) if m.end() < len(text))]


def best_start(text: str, terms: list[str], window: int, starts: list[int] | None = None) -> int:
    """The offset of the paragraph whose next `window` characters name the most distinct `terms`;
    0 on a tie with the top, for a short text or with no terms (reading from the top is the default).
    `starts`: the offsets to choose among instead of paragraph starts (a snippet's finer grid)."""
    if len(text) <= window or not terms:
        return 0
    sought = {_stem(t) for t in terms}
    # Each word found and stemmed once; a window is a slice of them (a word cut by the window's end
    # counts as its cut part, as if the window's text were read on its own).
    tokens = [(m.start(), m.end(), _stem(m.group().lower())) for m in _WORD.finditer(text)]
    begins = [t[0] for t in tokens]

    def named(start: int, limit: int) -> int:
        got = set()
        for b, e, stem in tokens[bisect.bisect_left(begins, start):bisect.bisect_left(begins, limit)]:
            got.add(stem if e <= limit else _stem(text[b:limit].lower()))
        return len(sought & got)

    starts = starts or paragraph_starts(text)
    best, best_at = (-1, -1), 0
    for at, end in zip(starts, [*starts[1:], len(text)], strict=True):
        # The window's words first; among equals, the start whose own paragraph names most of them
        # (an earlier start whose window merely reaches the answer would read filler first).
        found = (named(at, at + window), named(at, min(end, at + window)))
        if found > best:
            best, best_at = found, at
    return best_at


def from_best(text: str, terms: list[str], window: int) -> str:
    """`text` read from its best paragraph on, marked with a leading "… " when the top was skipped."""
    return read_at(text, best_start(text, terms, window))


def read_at(text: str, at: int) -> str:
    """`text` from offset `at` on, marked with a leading "… " when the top was skipped."""
    return text if at == 0 else "… " + text[at:]
