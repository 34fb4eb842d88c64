"""The outside memories in `muninn status --stores` and `muninn doctor`, and the entries `muninn init` and
`doctor` suggest from the variables seed 001 names (CORTEX_VAULT, SCOUT_DB, LENS_DB, HQ_URL). A suggestion
is text for the owner to paste into muninn.yaml: nothing is ever read from those variables at query time."""

from __future__ import annotations

from typing import Any

from muninn.core.checks import Check
from muninn.core.config import Settings
from muninn.core.outside_hints import suggestions
from muninn.plugins.search.outside import memories


def store_rows(settings: Settings, reader: str | None) -> list[dict[str, Any]]:
    """`muninn status --stores` rows: one per outside memory (per reader allowed it, with a policy)."""
    if not settings.outside:
        return []
    from muninn.plugins.search import reader_index

    pol = reader_index.policy_or_none(settings)
    states = {st.name: st for st in memories.states(memories.declared(settings))}
    who = ([p for p in pol.profiles.values() if reader is None or p.name == reader] if pol is not None else [])
    rows = []
    for name, st in states.items():
        readers = [p.name for p in who if name in p.outside_memories] if pol is not None else ["(owner)"]
        if not readers and reader is None:
            readers = ["(owner)"]     # no reader may query it: still listed, for the owner's own searches
        for r in readers:
            rows.append({"reader": r, "area": f"{memories.PREFIX}{name}", "files": st.entries,
                         "newest": None, "index": "available" if st.available else f"unavailable: {st.reason}",
                         "outside": True, "available": st.available, "required": st.required})
    return rows


def checks(settings: Settings) -> list[Check]:
    out = []
    for st in memories.states(memories.declared(settings)):
        name = f"outside memory {st.name}"
        if st.available:
            out.append(Check(name, "ok", f"{st.kind} {st.where}: {st.entries} entries"
                             + ("" if st.trusted else "; hits labelled untrusted")))
        elif st.reason and st.reason.startswith("refused"):
            out.append(Check(name, "fail", st.reason, "point it at the other tool's own file"))
        else:
            out.append(Check(name, "fail" if st.required else "warn", f"{st.where}: {st.reason}",
                             "searches skip it and say so" if not st.required else "start or fix it"))
    for line in suggestions(settings):
        out.append(Check("outside memory (suggested)", "ok", "an environment variable names another tool's "
                         f"memory; to search it, add under `outside:` in muninn.yaml: {line}"))
    return out
