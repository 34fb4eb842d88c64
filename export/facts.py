"""The fact: one markdown file that holds one thing worth finding, and how it is rendered.

A fact file is YAML front matter, one plain-language context line, then the body:

    ---
    id: notes/runbooks/database-upgrade-2025.md#rollback
    source: notes
    kind: section
    project: platform
    date: '2025-03-04'
    tags: [postgres, upgrade]
    breadcrumb: Database upgrade 2025 › Rollback
    source_path: runbooks/database-upgrade-2025.md
    content_hash: 3f9a0c1d2e4b5a69
    ---
    Runbook section "Database upgrade 2025 › Rollback" from runbooks/database-upgrade-2025.md (2025-03-04).

    ## Rollback
    ...

One fact per file because packing several facts into one chunk dilutes each one's vector
until search cannot find it. The front matter keys and the `id` are a contract: search,
the MCP server and sync read them, so rename them only together with a migration.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

import yaml

FRONT_MATTER_KEYS = ("id", "source", "kind", "project", "date", "tags", "breadcrumb", "source_path",
                     "content_hash")
CRUMB = " › "


@dataclass(frozen=True)
class Fact:
    """What a source yields. `key` is stable across runs and unique within the source."""

    source: str
    kind: str
    key: str
    title: str
    body: str
    context: str
    path: str  # relative output path, without a suffix: deterministic from the key
    project: str | None = None
    date: str | None = None
    tags: tuple[str, ...] = ()
    breadcrumb: tuple[str, ...] = ()
    source_path: str = ""

    @property
    def id(self) -> str:
        return f"{self.source}/{self.key}"

    def map_text(self, fn: Callable[[str], str]) -> Fact:
        """The same fact with every free-text field passed through `fn` (used for redaction).

        Fields are redacted one by one, before rendering, so a replacement can never break the
        YAML quoting of the front matter.
        """
        return replace(
            self, title=fn(self.title), body=fn(self.body), context=fn(self.context),
            project=fn(self.project) if self.project else self.project,
            tags=tuple(fn(t) for t in self.tags), breadcrumb=tuple(fn(b) for b in self.breadcrumb),
            source_path=fn(self.source_path), key=fn(self.key), kind=fn(self.kind),
            date=fn(self.date) if self.date else self.date,
        )


@dataclass
class Rendered:
    fact: Fact
    path: str  # relative, with .md
    text: str
    content_hash: str


def content_hash(text: str) -> str:
    # 16 hex digits: enough to tell versions apart, short enough not to eat the embedding's
    # 256-token window (a 64-digit hex string tokenises into dozens of word pieces).
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# Plain (unquoted) YAML only for text that cannot be read as anything but a string; everything
# else is a JSON string, which YAML reads as a double-quoted scalar. Hand-rolled because
# yaml.dump was ~75 % of the export's time (6 ms per fact).
_PLAIN = re.compile(r"[A-Za-z_/][\w ./#@+()›'-]*")
_ODD = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff]")
_RESERVED = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}


def _scalar(value: object) -> str:
    if value is None:
        return "null"
    text = str(value)
    if (_PLAIN.fullmatch(text) and text == text.strip() and text.lower() not in _RESERVED
            and " #" not in text):
        return text
    quoted = json.dumps(text, ensure_ascii=False)
    # Characters YAML treats as line breaks or refuses (NEL, LS, PS, BOM, C1 controls): escape all.
    return json.dumps(text) if _ODD.search(quoted) else quoted


def _front_matter(meta: dict[str, object]) -> str:
    lines = []
    for key, value in meta.items():
        if isinstance(value, list | tuple):
            lines.append(f"{key}: [{', '.join(_scalar(v) for v in value)}]")
        else:
            lines.append(f"{key}: {_scalar(value)}")
    return "\n".join(lines) + "\n"


def render(fact: Fact) -> Rendered:
    """The file text. Deterministic: the same fact renders to the same bytes on every run."""
    tail = f"{fact.context.strip()}\n\n{fact.body.strip()}\n"
    meta: dict[str, object] = {
        "id": fact.id,
        "source": fact.source,
        "kind": fact.kind,
        "project": fact.project,
        "date": fact.date,
        "tags": list(fact.tags),
        "breadcrumb": CRUMB.join(fact.breadcrumb) if fact.breadcrumb else fact.title,
        "source_path": fact.source_path,
    }
    head = _front_matter(meta)
    digest = content_hash(head + tail)
    head += f"content_hash: {digest}\n"
    return Rendered(fact=fact, path=f"{fact.path}.md", text=f"---\n{head}---\n{tail}", content_hash=digest)


def parse_front_matter(text: str) -> tuple[dict, str]:
    """Split a markdown file into its front matter (a dict, maybe empty) and the rest."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 4)
    if end < 0:
        return {}, text
    try:
        meta = yaml.safe_load(text[4:end]) or {}
    except yaml.YAMLError:
        return {}, text
    rest = text[end + 4:]
    return (meta if isinstance(meta, dict) else {}), rest.removeprefix("\n")


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
