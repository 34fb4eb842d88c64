"""What a reader's policy does not let it read leaves every candidate list before anything ranks it,
fetches its text or embeds it: the defence behind the reader's own index and its server key, which
should already hold nothing else (Searcher.readable, from policy.Profile.may)."""

from __future__ import annotations

from muninn.plugins.search.state import SearchState


class Scope:
    name = "scope"
    switch = None   # never off: it is a guard, not a ranking choice

    def applies(self, state: SearchState) -> bool:
        return state.searcher.readable is not None

    def run(self, state: SearchState) -> None:
        readable = state.searcher.readable
        assert readable is not None
        state.lists = {name: [c for c in cands if readable(c.uri)] for name, cands in state.lists.items()}
