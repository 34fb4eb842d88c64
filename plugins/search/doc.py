"""A fact file as search reads it, through its format's owner (muninn.core.factfile): front
matter, then one context line, then the body.

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
    uri: str
    text: str                    # the whole (possibly truncated) file as read
    body: str                    # text after the front matter
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
        """One key per original file, for the per-file cap. Sections of one note or one source file
        have ids `path#anchor` and share `source_path`; records (inventory, secrets, observations)
        also share the file they came from, but each is a thing of its own, so they are not capped."""
        fact_id, path = str(self.meta.get("id") or ""), self.meta.get("source_path")
        return f"{self.source}:{path}" if path and "#" in fact_id else self.uri


def area_of(uri: str) -> str:
    """`viking://resources/notes/x/y.md` -> `notes`."""
    rest = uri.split("://", 1)[-1].split("/")
    return rest[1] if len(rest) > 2 else rest[0]


def parse(uri: str, text: str) -> Doc:
    meta, body = factfile.split_front_matter(text)
    digest = str(meta.get("content_hash") or "") or hashlib.sha256(text.encode()).hexdigest()
    return Doc(uri=uri, text=text, body=body, meta=meta, content_hash=digest)


def snippet(doc: Doc, chars: int = 300, terms: Sequence[str] = (), window: int = 0) -> str:
    """The body with whitespace folded, cut at a word boundary; with `terms`, from the paragraph the
    reranker reads (passage.py), so a hit shows the part of a long section that answers."""
    # The passage is chosen in the fact, never in its neighbouring context (the fact is the body's start).
    at = passage.best_start(doc.fact, list(terms), window) if window else 0
    flat = ("… " if at else "") + " ".join(doc.body[at:].split())
    if len(flat) <= chars:
        return flat
    cut = flat[:chars].rsplit(" ", 1)[0]
    return cut + " …"
