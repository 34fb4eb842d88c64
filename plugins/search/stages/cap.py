"""At most `per_file` hits from one source file in the first `search.k` places, so one long
document cannot fill the page; a request for more hits gets the rest in score order."""

from __future__ import annotations

from muninn.plugins.search import cap
from muninn.plugins.search.state import SearchState


class Cap:
    name = "cap"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return True

    def run(self, state: SearchState) -> None:
        file_of = {c.uri: state.docs[c.uri].file_key for c in state.fused}
        state.fused = cap.per_file(state.fused, file_of, state.cfg.per_file, window=state.cfg.k)
