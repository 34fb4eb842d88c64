"""A fact file as search reads it, through its format's owner (muninn.core.factfile): front
matter, then one lead line, then the body.

A body may end in neighbouring context (the lines a conversation turn answers, the section a
paragraph sits in), after a `<!-- context -->` marker line. That context is there to help a
search find the fact, not to be the fact: the keyword index weighs it lower and the dense
rescoring embeds the fact without it.

Plain files without front matter still work: the title falls back to the first heading or the
file name, and there is simply no date or breadcrumb.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from muninn.core import factfile
from muninn.core.factfile import CONTEXT_MARKER, parse_date  # noqa: F401  (the owner's, re-exported)
from muninn.plugins.search import passage
from muninn.plugins.search.query import words

_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


@dataclass
class Doc:
    """A fact file as search reads it. `context` means what FactFile.context means (the text after the
    context marker); `fact` is what comes before the marker, lead line included. `body` here is all of
    the text after the front matter (lead line, fact and context), not FactFile.body."""

    uri: str
    text: str                    # the whole (possibly truncated) file as read
    body: str                    # text after the front matter: lead line, fact, context marker, context
    meta: dict[str, Any] = field(default_factory=dict)
    content_hash: str = ""

    @property
    def title(self) -> str:
        if m := _HEADING.search(self.body):
            return m.group(1)
        if crumb := factfile.crumbs(self.meta.get("breadcrumb")):
            return crumb[-1]
        first = next((line.strip() for line in self.body.splitlines() if line.strip()), "")
        if first and len(first) <= 80:
            return first
        return str(self.meta.get("id") or self.uri.rsplit("/", 1)[-1])

    @cached_property
    def _split(self) -> tuple[str, str]:
        """(fact, context): the body cut at the context marker, once per parsed file (docs are cached
        by content hash and read on every search that returns them)."""
        return factfile.split_context(self.body)

    @property
    def fact(self) -> str:
        """The body without its neighbouring context."""
        return self._split[0]

    @property
    def context(self) -> str:
        """The neighbouring context after the marker (FactFile.context)."""
        return self._split[1]

    @cached_property
    def header_words(self) -> frozenset[str]:
        """Words the title and breadcrumb say and the fact itself does not (its title line aside): who
        said it, which conversation or project. A title that restates the fact adds nothing here."""
        said = words(self.fact.replace(self.title, " ", 1))
        return frozenset(words(f"{self.title} {self.breadcrumb}") - said)

    def header_match(self, terms: list[str], facets: set[str]) -> float:
        """The share of the query's words that are facets (see KeywordIndex.header_share) named by
        `header_words`. BM25 gives a name that heads half the files almost no weight (its IDF is low),
        yet a question that names it wants those files: on LoCoMo dev this lifted hit@4
        (evals/results/locomo.md). Rarer header words are topics, which BM25 already weighs."""
        unique = set(terms)
        return len(unique & facets & self.header_words) / len(unique) if unique else 0.0

    @property
    def breadcrumb(self) -> str:
        crumb = self.meta.get("breadcrumb")
        if isinstance(crumb, list):     # nobody writes a list; hand-written front matter may
            return " > ".join(str(c) for c in crumb)
        return str(crumb) if crumb else ""

    @property
    def date(self) -> dt.datetime | None:
        return parse_date(self.meta.get("date"))

    @property
    def source(self) -> str:
        """The store or area a hit comes from: front matter `source`, else the top folder."""
        if src := self.meta.get("source"):
            return str(src)
        return area_of(self.uri)

    @property
    def file_key(self) -> str:
        return file_key(self.uri, self.source, str(self.meta.get("id") or ""), self.meta.get("source_path"))


def file_key(uri: str, source: str, fact_id: str, source_path: str | None) -> str:
    """One key per original file, for the per-file cap. Sections of one note or one source file
    have ids `path#anchor` and share `source_path`; records (inventory, secrets, observations)
    also share the file they came from, but each is a thing of its own, so they are not capped."""
    return f"{source}:{source_path}" if source_path and "#" in fact_id else uri


def area_of(uri: str) -> str:
    """`viking://resources/notes/x/y.md` -> `notes`."""
    rest = uri.split("://", 1)[-1].split("/")
    return rest[1] if len(rest) > 2 else rest[0]


def parse(uri: str, text: str) -> Doc:
    meta, body = factfile.split_front_matter(text)
    digest = str(meta.get("content_hash") or "") or hashlib.sha256(text.encode()).hexdigest()
    return Doc(uri=uri, text=text, body=body, meta=meta, content_hash=digest)


# A snippet's bound: what an agent reads of a hit (recall_search) and what `muninn search` prints.
SNIPPET_CHARS = 400
_FENCE = re.compile(r"^\s*(```|~~~)")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
_ROW = re.compile(r"^\s*\|")                          # a markdown table row: a line of its own, like code
_RULE = re.compile(r"^\s*\|?(\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*$")   # a table's header rule: markup only
# Where a sentence of prose may begin: after a sentence's end, before a capital or markup.
_SENTENCE = re.compile(r"(?<=[.!?:;])\s+(?=[A-Z`*(\[\"“])")


@dataclass(frozen=True)
class _Block:
    text: str
    code: bool      # a code or command line, or a table row: shown whole or not at all


def snippet(doc: Doc, chars: int = SNIPPET_CHARS, terms: Sequence[str] = (), window: int = 0) -> str:
    """What a hit shows of its fact: from the passage the reranker read (passage.py, the same choice),
    the sentence or line from which the next `chars` characters name most of the query's `terms`,
    to about `chars` characters. The hit carries its title and breadcrumb, so the lead line and the
    headings that restate them are left out; prose is folded onto one line a paragraph, and a code or
    command line is kept whole on its own line (a cut command is worse than none)."""
    fact = doc.fact
    at = passage.best_start(fact, list(terms), window) if window else 0
    blocks = _blocks(doc, fact[at:], top=at == 0)
    text, offsets = "", []
    for b in blocks:
        offsets.append(len(text))
        text += b.text + "\n"
    # Only starts inside what the reranker read: beyond it, the snippet would show what it never judged.
    starts = sorted({o + s for o, b in zip(offsets, blocks, strict=True)
                     for s in ([0] if b.code else [0, *(m.end() for m in _SENTENCE.finditer(b.text))])
                     if o + s < max(window, chars)})
    begin = passage.best_start(text, list(terms), chars, starts) if starts else 0
    first = next((i for i, o in enumerate(offsets) if o + len(blocks[i].text) >= begin), len(blocks))
    shown = blocks[first:]
    if shown and begin > offsets[first]:
        shown[0] = _Block(text[begin:offsets[first] + len(blocks[first].text)], False)
    out = _fit(shown, chars)
    return ("… " if at or begin else "") + out


def _blocks(doc: Doc, text: str, top: bool) -> list[_Block]:
    """Paragraphs of prose, each on one line, and code lines as they are; without the lead line that
    restates the header (read from the top) or a heading that is the title or a breadcrumb part."""
    said = {doc.title, *factfile.crumbs(doc.meta.get("breadcrumb"))}
    lines = text.splitlines()
    if top and doc.meta and lines and doc.title in lines[0]:
        lines = lines[1:]
    out: list[_Block] = []
    prose: list[str] = []
    code = False

    def flush() -> None:
        if prose:
            out.append(_Block(" ".join(" ".join(prose).split()), False))
            prose.clear()

    for line in lines:
        if _FENCE.match(line):
            flush()
            code = not code
        elif code:
            if line.strip():
                out.append(_Block(line.rstrip(), True))
        elif not line.strip() or ((m := _HEADING.match(line)) and m.group(1) in said):
            flush()
        elif _ROW.match(line):
            flush()
            if not _RULE.match(line):
                out.append(_Block(" ".join(line.split()), True))
        else:
            if _ITEM.match(line):
                flush()
            prose.append(line)
    flush()
    return out


def _fit(blocks: list[_Block], chars: int) -> str:
    """Whole blocks while they fit in `chars`; then the next prose block cut at a word (never inside a
    `code span`), while a code line that does not fit is left out. The first block is always shown."""
    lines: list[str] = []
    room = chars
    for b in blocks:
        if len(b.text) <= room:
            lines.append(b.text)
            room -= len(b.text) + 1
            continue
        if lines and (b.code or room < 40):
            lines.append("…")
            break
        cut = b.text[:max(room, 40)].rsplit(" ", 1)[0]
        if cut.count("`") % 2:            # inside a code span: stop before it opens
            cut = cut[:cut.rfind("`")].rstrip() or cut
        lines.append(cut + " …")
        break
    return "\n".join(lines)
