"""The days a hybrid question names ("on 3 June, 2023") become a window: vectors and BM25 then look
for the rest of the question, the dated stage lists the files dated then, and the date feature
scores how near each candidate's date is. The header match and the reranker read the query whole."""

from __future__ import annotations

from muninn.plugins.search.request import Switch
from muninn.plugins.search.state import SearchState


class Dates:
    name = "dates"
    switch = Switch("dates", "Ignore days the query names (\"on 3 June, 2023\").")

    def applies(self, state: SearchState) -> bool:
        return state.route == "hybrid" and state.analysis is not None and state.analysis.window is not None

    def run(self, state: SearchState) -> None:
        assert state.analysis is not None
        state.window = state.analysis.window
        state.sought = state.analysis.without_dates()
