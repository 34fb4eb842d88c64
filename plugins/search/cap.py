"""At most N hits per source file, so one long document cannot fill the page.

Facts cut from one note share `source_path` in their front matter; plain files count as their own.
"""

from __future__ import annotations

from collections import Counter

from muninn.plugins.search.stages import Candidate


def per_file(cands: list[Candidate], file_of: dict[str, str], limit: int) -> list[Candidate]:
    seen: Counter[str] = Counter()
    out = []
    for c in cands:
        key = file_of.get(c.uri, c.uri)
        if seen[key] < limit:
            seen[key] += 1
            out.append(c)
    return out
