"""The fact file: the one owner of its format. Every writer renders through `render`, every reader
parses through `parse` (or the two splitters under it).

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

    <!-- context -->
    Database upgrade 2025 › Preparation › Take a base backup

Front matter, one plain-language lead line, the body, and optionally the neighbouring context after
a `<!-- context -->` line: what helps a search find the fact without being the fact (the lines a
turn answers, the sections a paragraph sits in). Search weighs it lower and embeds the fact without it.

The keys are a contract: search, the MCP server and sync read them, so a rename goes with a
workspace migration (muninn.core.upgrade) and an entry in LEGACY_KEYS.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

KEYS = ("id", "source", "kind", "project", "date", "tags", "breadcrumb", "source_path", "content_hash")
CRUMB = " › "
# Read, never written: evals/lab/locomo.py's own files join crumbs with " > ".
_LEGACY_CRUMB = " > "
# Old key -> current key, read when the current key is absent: the MCP remember tool wrote
# `observed_at` and no `date` before the workspace format 1.
LEGACY_KEYS = {"observed_at": "date"}
CONTEXT_MARKER = "<!-- context -->"
# "<!-- context -->" or "<!-- context: the conversation around this turn -->", on a line of its own
_CONTEXT = re.compile(r"^<!--\s*context\b[^\n]*?-->[ \t]*$", re.M)
_FRONT = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.S)
# libyaml when present: the pure-Python loader was most of a keyword index build (evals/results/scale.md).
# Both build their values with the same safe constructor.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class FactFile:
    """One fact file, field by field. `extra` holds keys beyond KEYS (a remembered observation's
    `written_by`, `trust`), rendered after them in their given order. `lead` is the one-line
    plain-language lead; `context` the neighbouring context written after the marker. The same
    words mean the same in export's Fact and search's Doc (docs/architecture.md#a-facts-words)."""

    id: str
    source: str
    kind: str
    title: str
    body: str
    lead: str = ""
    context: str = ""
    project: str | None = None
    date: str | None = None
    tags: tuple[str, ...] = ()
    breadcrumb: tuple[str, ...] = ()
    source_path: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    content_hash: str = ""     # as read by `parse`; `render` computes its own


@dataclass(frozen=True)
class Rendered:
    text: str
    content_hash: str


def content_hash(text: str) -> str:
    # 16 hex digits: enough to tell versions apart, short enough not to eat the embedding's
    # 256-token window (a 64-digit hex string tokenises into dozens of word pieces).
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# Plain (unquoted) YAML only for text that cannot be read as anything but a string; everything
# else is a JSON string, which YAML reads as a double-quoted scalar. Hand-rolled because
# yaml.dump was most of the export's time (evals/results/decisions.md#yaml-dump).
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


def _front_matter(meta: Mapping[str, object]) -> str:
    lines = []
    for key, value in meta.items():
        if isinstance(value, list | tuple):
            lines.append(f"{key}: [{', '.join(_scalar(v) for v in value)}]")
        else:
            lines.append(f"{key}: {_scalar(value)}")
    return "\n".join(lines) + "\n"


def _unmark(text: str) -> str:
    """A line of the fact itself that reads as the context marker is escaped (`&lt;!--`, which
    markdown shows the same), or the reader would cut the fact there."""
    return _CONTEXT.sub(lambda m: "&lt;" + m.group(0)[1:], text)


def render(ff: FactFile) -> Rendered:
    """The file text. Deterministic: the same fact renders to the same bytes on every run, and
    `render(parse(text))` gives `text` back for anything `render` wrote."""
    lead = " ".join(ff.lead.split())          # one line: the reader takes the first paragraph as the lead
    tail = f"{lead}\n\n{_unmark(ff.body.strip())}\n"
    if ff.context.strip():
        tail += f"\n{CONTEXT_MARKER}\n{_unmark(ff.context.strip())}\n"
    meta: dict[str, object] = {
        "id": ff.id, "source": ff.source, "kind": ff.kind, "project": ff.project, "date": ff.date,
        "tags": list(ff.tags), "breadcrumb": CRUMB.join(ff.breadcrumb) if ff.breadcrumb else ff.title,
        "source_path": ff.source_path,
    }
    meta.update({k: v for k, v in ff.extra.items() if k not in KEYS})
    head = _front_matter(meta)
    digest = content_hash(head + tail)
    head += f"content_hash: {digest}\n"
    return Rendered(text=f"---\n{head}---\n{tail}", content_hash=digest)


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The front matter (a dict, maybe empty) and the rest. Text that only looks like front matter
    (not YAML, not a mapping) stays in the rest."""
    m = _FRONT.match(text)
    if not m:
        return {}, text
    try:
        meta = yaml.load(m.group(1), Loader=_LOADER)  # a safe loader: C or Python
    except yaml.YAMLError:
        return {}, text
    if not isinstance(meta, dict):
        return {}, text
    for old, new in LEGACY_KEYS.items():
        if old in meta and meta.get(new) in (None, ""):
            meta[new] = meta[old]
    return meta, text[m.end():]


def split_context(body: str) -> tuple[str, str]:
    """(fact, neighbouring context): the body cut at the context marker line."""
    m = _CONTEXT.search(body)
    return (body[: m.start()].strip(), body[m.end():].strip()) if m else (body.strip(), "")


def crumbs(value: object) -> tuple[str, ...]:
    """A breadcrumb as written (a string joined with CRUMB or the legacy " > ", or a list) as parts."""
    if isinstance(value, list | tuple):
        return tuple(str(v) for v in value)
    if not value:
        return ()
    text = str(value)
    return tuple(text.split(CRUMB if CRUMB in text or _LEGACY_CRUMB not in text else _LEGACY_CRUMB))


def parse(text: str) -> FactFile:
    """A fact file back into its fields; plain markdown gives a FactFile with empty metadata."""
    meta, rest = split_front_matter(text)
    # The lead is one line followed by a blank one (render writes it so, possibly empty).
    first, newline, after = rest.partition("\n")
    if meta and newline and after.startswith("\n"):
        lead, body = first, after
    else:
        lead, body = "", rest
    fact, context = split_context(body)
    crumb = crumbs(meta.get("breadcrumb"))
    tags = meta.get("tags") or []
    date = meta.get("date")
    return FactFile(
        id=str(meta.get("id") or ""), source=str(meta.get("source") or ""), kind=str(meta.get("kind") or ""),
        title=crumb[-1] if crumb else "", body=fact, lead=lead.strip(), context=context,
        project=None if meta.get("project") is None else str(meta["project"]),
        date=None if date in (None, "") else format_date(date) if isinstance(date, dt.date) else str(date),
        tags=tuple(str(t) for t in (tags if isinstance(tags, list) else [tags])),
        breadcrumb=crumb, source_path=str(meta.get("source_path") or ""),
        extra={k: v for k, v in meta.items() if k not in KEYS},
        content_hash=str(meta.get("content_hash") or ""),
    )


_RENDERED = re.compile(r"\A---\n(.*\n)content_hash: ([0-9a-f]+)\n---\n(.*)\Z", re.S)


def problem(text: str) -> str | None:
    """Why `text` is not a whole fact file as `render` writes one (None when it is): `empty`,
    `no-front-matter`, `missing-keys:a,b`, or `content-hash-mismatch` (truncated or edited).
    Sync refuses such files, so a half-written export is never uploaded as a fact."""
    if not text.strip():
        return "empty"
    meta, _ = split_front_matter(text)
    if not meta:
        return "no-front-matter"
    missing = [k for k in KEYS if k not in meta]
    if missing:
        return "missing-keys:" + ",".join(missing)
    m = _RENDERED.match(text)
    if not m or content_hash(m.group(1) + m.group(3)) != m.group(2):
        return "content-hash-mismatch"
    return None


# Names what `embed_text` keeps: vectors cached by text are keyed by it, so changing the rule
# re-embeds instead of mixing two rules in one cache.
EMBED_RULE = "crumb-body-context-v1"


def is_fact_text(text: str) -> bool:
    """Whether a text an embedder is sent is a fact file (front matter with an id or a content hash)."""
    meta, _ = split_front_matter(text)
    return bool(meta) and bool({"id", "content_hash"} & meta.keys())


def embed_text(text: str) -> str:
    """What an embedder reads of a fact file: the breadcrumb, the fact, then its neighbouring context.

    Not the front matter nor the lead line: ids, paths, tags and the content hash took about two
    thirds of a 256-token window on documentation, leaving ~350 characters of the body
    (evals/results/corpora.md). Anything that is not a fact file (a query, plain markdown) comes back
    unchanged, so one rule serves stored files and questions alike."""
    if not is_fact_text(text):
        return text
    ff = parse(text)
    head = CRUMB.join(ff.breadcrumb) or ff.title
    return "\n\n".join(part for part in (head, ff.body, ff.context) if part.strip())


def parse_date(value: Any) -> dt.datetime | None:
    """A front matter date (date, datetime or ISO string, with or without a time of day) as an
    aware UTC datetime; a date without a time is midnight UTC; anything else is None."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        out = value
    elif isinstance(value, dt.date):
        out = dt.datetime(value.year, value.month, value.day)
    else:
        try:
            out = dt.datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    return out.astimezone(dt.UTC) if out.tzinfo else out.replace(tzinfo=dt.UTC)


def format_date(value: dt.date | dt.datetime) -> str:
    """How a date is written: `2025-05-14` for a day, `2025-05-14T09:30:00Z` (UTC) with a time of day."""
    if isinstance(value, dt.datetime):
        moment = value.astimezone(dt.UTC) if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return moment.isoformat(timespec="seconds").replace("+00:00", "Z")
    return value.isoformat()
