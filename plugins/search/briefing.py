"""Briefing mode: fill a token budget round-robin across sources, so one store cannot drown the
rest. Best of each source first, then the next best of each, and so on; a source with no hits is
simply absent.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable

from muninn.plugins.search.types import Hit


def tokens(text: str) -> int:
    """~4 characters a token: close enough for a budget, and needs no tokenizer."""
    return math.ceil(len(text) / 4)


def interleave(hits: list[Hit]) -> list[Hit]:
    by_source: OrderedDict[str, list[Hit]] = OrderedDict()
    for hit in hits:
        by_source.setdefault(hit.source, []).append(hit)
    out: list[Hit] = []
    queues = list(by_source.values())
    while any(queues):
        for queue in queues:
            if queue:
                out.append(queue.pop(0))
    return out


def render_one(hit: Hit) -> str:
    head = f"[{'access' if hit.stage_scores.get('pinned') else hit.source}] {hit.title}"
    if hit.breadcrumb and hit.breadcrumb != hit.title:
        head += f" — {hit.breadcrumb}"
    if hit.date:
        head += f" ({hit.date[:10]})"
    return f"{head}\n{hit.uri}\n{hit.snippet}\n"


def build(hits: list[Hit], budget: int, render: Callable[[Hit], str] = render_one) -> tuple[str, list[Hit]]:
    """The briefing text and the hits it holds; entries that do not fit are left out whole.
    Pinned inventory entries (access blocks) come first, before the round-robin. `render` is how an
    entry is written (the MCP server labels what came from a file): its length is what is counted."""
    used: list[Hit] = []
    parts: list[str] = []
    spent = 0
    pinned = [h for h in hits if h.stage_scores.get("pinned")]
    for hit in pinned + interleave([h for h in hits if h not in pinned]):
        block = render(hit)
        cost = tokens(block + "\n")
        if spent + cost > budget:
            continue
        spent += cost
        parts.append(block)
        used.append(hit)
    return "\n".join(parts), used
