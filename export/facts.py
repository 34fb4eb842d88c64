"""The fact: one markdown file that holds one thing worth finding, as a source yields it.

One fact per file because packing several facts into one chunk dilutes each one's vector
until search cannot find it. The file format (front matter keys, lead line, context marker,
breadcrumb separator, dates) belongs to muninn.core.factfile; this module maps a source's Fact
onto it and gives each fact its path.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from muninn.core import factfile

# Re-exported for the sources; the owner is muninn.core.factfile.
FRONT_MATTER_KEYS = factfile.KEYS
CRUMB = factfile.CRUMB
parse_front_matter = factfile.split_front_matter


@dataclass(frozen=True)
class Fact:
    """What a source yields. `key` is stable across runs and unique within the source.

    The words are the fact file's (muninn.core.factfile.FactFile): `lead` is the one plain-language
    line written above the body, `context` what is written after the context marker."""

    source: str
    kind: str
    key: str
    title: str
    body: str
    lead: str
    path: str  # relative output path, without a suffix: deterministic from the key
    project: str | None = None
    date: str | None = None
    tags: tuple[str, ...] = ()
    breadcrumb: tuple[str, ...] = ()
    source_path: str = ""
    # The entries or sections around the fact, written after the context marker: they help a
    # search find it without being it (see muninn.core.factfile).
    context: str = ""
    # Other names the fact answers to, whole (an inventory entry's name and aliases): a query that
    # names one of them pins the fact's access block (plugins/search/stages/pin.py). Never generic tags.
    names: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.source}/{self.key}"

    def map_text(self, fn: Callable[[str], str]) -> Fact:
        """The same fact with every free-text field passed through `fn` (used for redaction).

        Fields are redacted one by one, before rendering, so a replacement can never break the
        YAML quoting of the front matter.
        """
        return replace(
            self, title=fn(self.title), body=fn(self.body), lead=fn(self.lead),
            project=fn(self.project) if self.project else self.project,
            tags=tuple(fn(t) for t in self.tags), breadcrumb=tuple(fn(b) for b in self.breadcrumb),
            source_path=fn(self.source_path), key=fn(self.key), kind=fn(self.kind),
            date=fn(self.date) if self.date else self.date,
            context=fn(self.context) if self.context else self.context,
            names=tuple(fn(n) for n in self.names),
        )


@dataclass
class Rendered:
    fact: Fact
    path: str  # relative, with .md
    text: str
    content_hash: str


content_hash = factfile.content_hash


def to_file(fact: Fact) -> factfile.FactFile:
    return factfile.FactFile(
        id=fact.id, source=fact.source, kind=fact.kind, title=fact.title, body=fact.body, lead=fact.lead,
        context=fact.context, project=fact.project, date=fact.date, tags=fact.tags,
        breadcrumb=fact.breadcrumb, source_path=fact.source_path,
        extra={"names": list(fact.names)} if fact.names else {},
    )


def render(fact: Fact) -> Rendered:
    """The file text. Deterministic: the same fact renders to the same bytes on every run."""
    out = factfile.render(to_file(fact))
    return Rendered(fact=fact, path=f"{fact.path}.md", text=out.text, content_hash=out.content_hash)


_SLUG_DROP = re.compile(r"[^a-z0-9]+")


def slug(text: str, limit: int = 60) -> str:
    """A path-safe, lowercase, ASCII name. Never empty."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    out = _SLUG_DROP.sub("-", ascii_text.lower()).strip("-")[:limit].strip("-")
    return out or "untitled"


def unique_paths(facts: Iterable[Fact]) -> list[Fact]:
    """Give each fact its own path: a collision gets `-2`, `-3`, ... in the order facts came.

    Sources yield in a deterministic order, so the suffixes are stable across runs.
    """
    seen: dict[str, int] = {}
    out: list[Fact] = []
    for fact in facts:
        path = fact.path
        n = seen.get(path.lower(), 0)
        seen[path.lower()] = n + 1
        if n:
            path = f"{path}-{n + 1}"
            while path.lower() in seen:
                n += 1
                path = f"{fact.path}-{n + 1}"
            seen[path.lower()] = 1
        out.append(fact if path == fact.path else replace(fact, path=path))
    return out
