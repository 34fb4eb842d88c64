"""The outside memories muninn.yaml declares: their state, one query across them, one hit opened.

A hit is a search Hit whose uri is `outside:<name>/<ref>` (the handle recall_read and `muninn read`
open), `source` the memory's name, `breadcrumb` its meta, `snippet` an excerpt cut from the redacted
text: seed 001's {source, title, ref, meta, excerpt, score}. Every string in it passed `scrub` first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from muninn.core.config import OutsideSettings, Settings
from muninn.guards.policy.label import neutralise
from muninn.plugins.search.outside import http_memory, sqlite_memory
from muninn.plugins.search.outside.presets import PRESETS
from muninn.plugins.search.outside.sqlite_memory import Row, Unavailable
from muninn.plugins.search.types import Hit

PREFIX = "outside:"
EXCERPT = 240
URI_CHARS = 1000
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029]")
MARGIN = 4096
Scrub = Callable[[str], str]


@dataclass(frozen=True)
class State:
    name: str
    kind: str
    where: str
    available: bool
    reason: str | None
    entries: int | None
    trusted: bool
    required: bool

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "where": self.where, "available": self.available,
                "reason": self.reason, "entries": self.entries, "trusted": self.trusted, "required": self.required}

    def line(self) -> str:
        how = f"{self.entries} entries" if self.available else f"unavailable: {self.reason}"
        trust = "trusted" if self.trusted else "untrusted"
        return f"outside memory {self.name} ({self.kind}, {trust}) {self.where}: {how}"


def workspace_roots(settings: Settings) -> list[tuple[str, Path]]:
    """muninn's own files an outside memory may never point into: they are muninn's, not another tool's."""
    p = settings.paths
    return [("MUNINN_HOME", p.home), ("the readers' keyword indexes", p.search_indexes),
            ("the keyword index", p.search_index()), ("the vault", p.vault_store), ("the exports", p.exports)]


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.expanduser().resolve())
        return True
    except ValueError:
        return False


class Memory:
    def __init__(self, cfg: OutsideSettings, settings: Settings) -> None:
        self.cfg = cfg
        self.name = cfg.name
        self.trusted = cfg.trusted
        self._settings = settings
        self.path = settings.paths.resolve(cfg.path) if cfg.path is not None else None
        if cfg.preset is not None:
            preset = PRESETS[cfg.preset]
            self._sql, self._read, self._count = preset.query, preset.read, preset.count
        else:
            self._sql, self._read, self._count = cfg.query or "", cfg.read, cfg.count

    @property
    def where(self) -> str:
        return str(self.path) if self.path is not None else str(self.cfg.url)

    def refused(self) -> str | None:
        if self.path is None:
            return None
        for what, root in workspace_roots(self._settings):
            if _inside(self.path, root):
                return (f"refused: {self.path} is inside muninn's own workspace ({what}); an outside memory "
                        "is another tool's")
        return None

    def _key(self) -> str | None:
        from muninn.core import credentials

        try:
            return credentials.for_home(self._settings).get(f"outside:{self.name}")
        except Exception:  # no usable keyring: asked without a key
            return None

    def search(self, query: str, limit: int) -> list[Row]:
        if (why := self.refused()) is not None:
            raise Unavailable(why)
        if self.cfg.kind == "http":
            return http_memory.search(self.where, query, limit, self._key(), self.cfg.timeout)
        assert self.path is not None
        return sqlite_memory.search(self.path, self._sql, query, limit)

    def read(self, ref: str) -> str | None:
        if (why := self.refused()) is not None:
            raise Unavailable(why)
        if self.cfg.kind == "http":
            return http_memory.read(self.where, ref, self._key(), self.cfg.timeout)
        if not self._read:
            raise Unavailable("its entry in muninn.yaml has no `read` query: a hit cannot be opened")
        assert self.path is not None
        text = sqlite_memory.one(self.path, self._read, (ref,))
        return None if text is None else str(text)

    def state(self) -> State:
        def done(available: bool, reason: str | None, entries: int | None) -> State:
            return State(self.name, self.cfg.kind, self.where, available, reason, entries, self.trusted,
                         self.cfg.required)
        try:
            if (why := self.refused()) is not None:
                raise Unavailable(why)
            if self.cfg.kind == "http":
                return done(True, None, http_memory.count(self.where, self._key(), self.cfg.timeout))
            assert self.path is not None
            sqlite_memory.search(self.path, self._sql, "muninn", 1)   # the schema and the tokenizer answer
            entries = sqlite_memory.one(self.path, self._count) if self._count else None
            return done(True, None, int(entries) if isinstance(entries, int) else None)
        except Unavailable as exc:
            return done(False, str(exc), None)


def declared(settings: Settings, allowed: Iterable[str] | None = None) -> list[Memory]:
    """The declared memories, in muninn.yaml's order; `allowed`: only those names (a reader's)."""
    names = None if allowed is None else set(allowed)
    return [Memory(o, settings) for o in settings.outside if names is None or o.name in names]


def states(memories: Sequence[Memory]) -> list[State]:
    if not memories:
        return []
    with ThreadPoolExecutor(max_workers=min(8, len(memories))) as pool:
        return list(pool.map(lambda m: m.state(), memories))


def _first(text: str, query: str) -> int:
    low = text.casefold()
    return min((i for w in re.findall(r"\w+", query.casefold()) if (i := low.find(w)) >= 0), default=0)


def excerpt(text: str, query: str, size: int = EXCERPT) -> str:
    """A window of the (already redacted) text around the first word of the query it holds."""
    flat = " ".join(text.split())
    start = max(0, _first(flat, query) - size // 3)
    cut = flat[start:start + size]
    return ("… " if start else "") + cut + (" …" if start + size < len(flat) else "")


def around(text: str, query: str, scrub: Scrub) -> str:
    """The redacted excerpt of a long text: the redactor reads the part around the match with MARGIN on each
    side (a 4096-bit PEM key is ~3.3 KB), so a secret that reaches the excerpt is whole in what it reads,
    and a 100 KB page costs a few KB of redaction, not the page."""
    if len(text) <= 2 * MARGIN + EXCERPT:
        return excerpt(scrub(text), query)
    at = _first(text, query)
    lo, hi = max(0, at - MARGIN), min(len(text), at + EXCERPT + MARGIN)
    window = scrub(text[lo:hi])
    return excerpt(window, query)


def shown_ref(ref: str, scrub: Scrub) -> str:
    """The other tool's reference as it may stand outside the untrusted label (in the hit's uri): redacted,
    a forged label tag replaced, and no line break or control character to start a line of its own. A ref
    this changes cannot be opened again, which open_hit says."""
    return _CONTROL.sub("?", neutralise(scrub(ref)))[:URI_CHARS]


def to_hit(memory: Memory, row: Row, rank: int, query: str, scrub: Scrub) -> Hit:
    return Hit(uri=f"{PREFIX}{memory.name}/{shown_ref(row.ref, scrub)}", title=scrub(row.title),
               breadcrumb=scrub(row.meta),
               score=round(row.score, 6), stage_scores={"outside_rank": float(rank)}, date=row.date,
               snippet=around(row.text, query, scrub), source=memory.name)


def query(memories: Sequence[Memory], text: str, limit: int, scrub: Scrub) -> tuple[dict[str, list[Hit]], list[str]]:
    """Every memory asked at once: ({name: its hits, its own order}, one warning per memory skipped)."""
    if not memories:
        return {}, []

    def one(m: Memory) -> tuple[str, list[Hit] | None, str | None]:
        try:
            rows = m.search(text, limit)
        except Unavailable as exc:
            return m.name, None, f"outside memory {m.name} skipped: {exc}"
        return m.name, [to_hit(m, r, i, text, scrub) for i, r in enumerate(rows, 1)], None

    with ThreadPoolExecutor(max_workers=min(8, len(memories))) as pool:
        answers = list(pool.map(one, memories))
    return ({name: hits for name, hits, _ in answers if hits is not None},
            [w for _, _, w in answers if w is not None])


def split_handle(handle: str) -> tuple[str, str] | None:
    """`outside:<name>/<ref>` → (name, ref); None for anything else."""
    if not handle.startswith(PREFIX) or "/" not in handle[len(PREFIX):]:
        return None
    name, ref = handle[len(PREFIX):].split("/", 1)
    return name, ref


def open_hit(memories: Sequence[Memory], handle: str, scrub: Scrub) -> tuple[Memory, str]:
    """(the memory, the hit's whole text, redacted): seed 001's expand. Unavailable when it cannot be opened."""
    parts = split_handle(handle)
    if parts is None:
        raise Unavailable(f"{handle!r} is not an outside hit (outside:<memory>/<ref>)")
    name, ref = parts
    memory = next((m for m in memories if m.name == name), None)
    if memory is None:
        raise Unavailable(f"no outside memory {name!r} here")
    if "[REDACTED" in ref or "[forged label removed]" in ref:
        raise Unavailable("its reference held a secret or a label tag and is shown changed, so it cannot be "
                          "asked for")
    text = memory.read(ref)
    if text is None:
        raise Unavailable(f"{name} has no entry {ref!r} (any more)")
    return memory, scrub(text)
