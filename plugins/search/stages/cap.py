"""At most `per_file` hits from one source file, so one long document cannot fill the page."""

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
        state.fused = cap.per_file(state.fused, file_of, state.cfg.per_file)
