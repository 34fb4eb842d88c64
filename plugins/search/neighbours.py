"""Neighbour expansion: the facts next to the best reranked hits get reranked too.

One fact per file splits what belongs together: a reply from the line it answers, a runbook step
from the one before it. When a hit is strong, the fact beside it is often the answer the
question asked for, yet neither retriever put it in the pool (LoCoMo dev: of the questions
missed at 10, a fifth had an evidence turn next to one of the top 3). A fact names its
neighbours on a `<!-- neighbours: ... -->` line (search.doc).

A neighbour is a path relative to the fact's own folder. It is followed only when it stays a
plain relative `.md` path that resolves under the search target: no scheme, no absolute path,
no percent-encoding or backslashes, nothing that climbs out with `..`. It is then read with the
reader's own identity, like every other candidate.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

from muninn.plugins.search import doc as docmod

# A file name segment: what the exporter writes (slugs, dots, dashes, underscores), nothing else.
_SAFE = re.compile(r"[A-Za-z0-9._-]+")


def resolve(uri: str, rel: str, target: str) -> str | None:
    """The URI `rel` points to from the fact at `uri`, or None when it is not safe to follow."""
    if not rel.endswith(".md") or rel.startswith("/") or "//" in rel:
        return None
    parts = rel.split("/")
    if not all(p == ".." or (_SAFE.fullmatch(p) and p != ".") for p in parts):
        return None
    scheme, sep, path = uri.partition("://")
    if not sep:
        return None
    out = f"{scheme}://{posixpath.normpath(posixpath.join(posixpath.dirname(path), rel))}"
    prefix = target.rstrip("/")
    if out == uri or not out.startswith(prefix + "/"):
        return None
    return out


def of(docs: Iterable[docmod.Doc], target: str, skip: set[str]) -> list[tuple[str, str]]:
    """(neighbour URI, the hit it is next to) for each hit in order, each URI once, none in `skip`."""
    out: dict[str, str] = {}
    for d in docs:
        for rel in d.neighbours:
            uri = resolve(d.uri, rel, target)
            if uri and uri not in skip and uri not in out:
                out[uri] = d.uri
    return list(out.items())
