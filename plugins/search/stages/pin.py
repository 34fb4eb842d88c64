"""An inventory entry named by the query goes on top, as an access block: asked about db01, the
reader first needs how to reach db01, whatever else matches the words.

"Named" means the entry's id, name or one of its aliases (the fact's `names`) appears in the query as
whole words ("bastion", "platform cluster", "jump01.example.com"). Tags are not used: they mix aliases
with generic words ("postgres"), and a generic word must not pin a host.
"""

from __future__ import annotations

import re

from muninn.plugins.search.doc import Doc
from muninn.plugins.search.state import SearchState
from muninn.plugins.search.types import Candidate

SOURCE = "inventory"


def names(d: Doc) -> set[str]:
    fact_id = str(d.meta.get("id") or "")
    key = fact_id.split("/", 1)[-1] if fact_id.startswith(SOURCE + "/") else fact_id
    declared = d.meta.get("names")
    others = [str(n) for n in declared] if isinstance(declared, list) else []
    return {n.lower() for n in (key, d.title, *others) if n and len(n) >= 3}


def named(query: str, d: Doc) -> bool:
    if d.source != SOURCE:
        return False
    text = query.lower()
    return any(re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w-])", text) for n in names(d))


def apply(query: str, cands: list[Candidate], docs: dict[str, Doc]) -> list[Candidate]:
    pinned = [c for c in cands if named(query, docs[c.uri])]
    for c in pinned:
        c.stage_scores["pinned"] = 1.0
    return pinned + [c for c in cands if c not in pinned]


class Pin:
    name = "pin"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return True

    def run(self, state: SearchState) -> None:
        state.fused = apply(state.request.text, state.fused, state.docs)
