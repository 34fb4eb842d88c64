"""At most `per_file` hits from one source file in the first `search.k` places, so one long
document cannot fill the page; a request for more hits gets the rest in score order.

Facts cut from one note share `source_path` in their front matter; plain files count as their own.
"""

from __future__ import annotations

from collections import Counter

from muninn.plugins.search.state import SearchState
from muninn.plugins.search.types import Candidate


def per_file(cands: list[Candidate], file_of: dict[str, str], limit: int, window: int | None = None) -> list[Candidate]:
    """At most `limit` candidates of one file in the first `window` places (the page a reader sees);
    below a full page, the rest in their order. `window=None`, or too few other files to fill the
    page, caps the whole list and drops what is over: the page never holds more than `limit` of one file.

    A request for more than the page gets the other sections of a long document back in score order:
    on the Debian handbook capping the first 4 places found more in the top 10 than capping all 10,
    with the same top 4 on every corpus (evals/results/corpora.md)."""
    seen: Counter[str] = Counter()
    out: list[Candidate] = []
    later: list[Candidate] = []
    for c in cands:
        key = file_of.get(c.uri, c.uri)
        if window is not None and len(out) >= window:
            later.append(c)
        elif seen[key] < limit:
            seen[key] += 1
            out.append(c)
        elif window is not None:
            later.append(c)
    return out + later if window is not None and len(out) >= window else out


class Cap:
    name = "cap"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return True

    def run(self, state: SearchState) -> None:
        file_of = {c.uri: state.docs[c.uri].file_key for c in state.fused}
        state.fused = per_file(state.fused, file_of, state.cfg.per_file, window=state.cfg.k)
