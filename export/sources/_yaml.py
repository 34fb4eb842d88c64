"""Shared loading for the YAML sources (secrets, inventory): a list of entries, each validated
with file and line, ids unique."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from muninn.core import yamlfile

E = TypeVar("E", bound=BaseModel)


def entries(path: Path, model: type[E], top_key: str) -> list[E]:
    """Entries from a top-level list, or from the list under `top_key`."""
    doc = yamlfile.load(path)
    data, base = doc.data, ()
    if isinstance(data, dict) and top_key in data:
        data, base = data[top_key], (top_key,)
    if data is None:
        return []
    if not isinstance(data, list):
        raise doc.error_at(base, f"expected a list of entries (or a `{top_key}:` list)")
    out: list[E] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            raise doc.error_at((*base, i), "each entry must be a mapping with at least an `id`")
        entry = doc.validate(model, item, base=(*base, i))
        ident = str(entry.id)
        if ident in seen:
            raise doc.error_at((*base, i, "id"), f"duplicate id {ident!r} (first at entry {seen[ident] + 1})")
        seen[ident] = i
        out.append(entry)
    return out
