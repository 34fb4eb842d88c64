"""`muninn search --only` and the outside memories on the command line: which areas and memories a
search asks, and its result with the outside hits merged (the same union as recall_search)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from muninn.core.config import Settings
from muninn.plugins.search import briefing as briefmod
from muninn.plugins.search.outside import memories, union
from muninn.plugins.search.outside.memories import Memory
from muninn.plugins.search.types import Reranker, SearchError, SearchResult


def names(only: Sequence[str] | None) -> list[str]:
    """`--only a,b --only c` → [a, b, c]."""
    return [n.strip() for item in only or () for n in item.split(",") if n.strip()]


def plan(s: Settings, only: list[str], targets: list[str], reader: str | None,
         areas: dict[str, str]) -> tuple[list[str], list[Memory], bool]:
    """(the folders to search, the outside memories to ask, whether muninn's own areas are searched).
    The owner asks every declared memory; `--profile` only those its policy's `outside:` names."""
    allowed = None
    if reader is not None:
        from muninn.core import policy as policy_mod

        allowed = policy_mod.load_for(s).profile(reader).outside_memories
    mine = memories.declared(s, allowed)
    by_name = {m.name: m for m in mine}
    folders = list(targets)
    for name in only:
        if name in by_name:
            continue
        if name not in areas:
            known = sorted(areas) + sorted(by_name)
            raise SearchError(f"--only: {name!r} is neither an area nor an outside memory this search may ask",
                              fix=f"name one of: {', '.join(known) or 'none'}")
        folders.append(areas[name])
    if only:
        asked = [by_name[n] for n in dict.fromkeys(only) if n in by_name]
        return list(dict.fromkeys(folders)), asked, bool(folders)
    return folders, ([] if targets else mine), True


def merge(s: Settings, result: SearchResult, asked: list[Memory], own: bool, reranker: Reranker | None,
          k: int, brief: bool, tokens: int | None) -> SearchResult:
    from muninn.plugins.search.outside.scrub import FullScrub

    found, skipped = memories.query(asked, result.query, max(k * 2, 10), FullScrub.from_settings(s))
    hits, order, said = union.merge(result.query, result.hits if own else [], found, reranker, s.ranking)
    warnings = [*result.warnings, *skipped, *said]
    out = dataclasses.replace(result, hits=hits if brief else hits[:k], warnings=warnings,
                              route=result.route if own else "outside")
    out.route += f"; {order} across muninn and the outside memories"
    if brief:
        out.briefing, out.hits = briefmod.build(hits, tokens or s.search.briefing_tokens)
    return out


def marks(s: Settings, uris: Sequence[str]) -> dict[str, list[str]]:
    """{outside uri: why it is data} for hits of memories not marked `trusted: true`."""
    trusted = {o.name for o in s.outside if o.trusted}
    out = {}
    for uri in uris:
        parts = memories.split_handle(uri)
        if parts is not None and parts[0] not in trusted:
            out[uri] = [f"{parts[0]} (outside memory)"]
    return out
