"""Read the query once and decide its route: one plain function over the query's analysis and the switches.

An identifier (ticket key, host, IP, path) goes to BM25 alone: it has no semantic neighbourhood (`routing`).
A question goes to BM25 as well as to the vectors (`hybrid`; off: vectors only). The days a hybrid question
names ("on 3 June, 2023") become a window (`dates`): vectors and BM25 then look for the rest of the
question, the dated stage lists the files dated then, and the date feature scores how near each
candidate's date is. The header match and the reranker read the query whole.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from muninn.plugins.search import query
from muninn.plugins.search.query import Analysis
from muninn.plugins.search.query_dates import Window
from muninn.plugins.search.request import Switch
from muninn.plugins.search.state import SearchState

HYBRID = Switch("hybrid", "Vectors only: no BM25 keyword fusion.")
ROUTING = Switch("routing", "Send identifiers through vectors too.")
DATES = Switch("dates", "Ignore days the query names (\"on 3 June, 2023\").")


@dataclass(frozen=True)
class Route:
    name: str                   # "keyword" (identifier), "hybrid", "vector"
    window: Window | None       # the days the query names, when they are used
    sought: Analysis            # what vectors and BM25 look for: the query less those days
    problem: str = ""           # why a keyword route fell back to vectors


def decide(analysis: Analysis, on: Callable[[str], bool], has_index: bool, index_problem: str = "") -> Route:
    """The route of a query: hybrid unless switched off, keyword for an identifier, vectors when there is
    no keyword index to take either; a hybrid question's named days, unless `dates` is off."""
    name = "vector"
    if on(HYBRID.name):
        name = "hybrid"
    if on(ROUTING.name) and analysis.is_identifier:
        name = "keyword"
    problem = ""
    if name != "vector" and not has_index:
        name, problem = "vector", f"keyword stage skipped: {index_problem}"
    if name == "hybrid" and on(DATES.name) and analysis.window is not None:
        return Route(name, analysis.window, analysis.without_dates(), problem)
    return Route(name, None, analysis, problem)


class Analyse:
    name = "analyse"
    switch = None
    switches = (HYBRID, ROUTING, DATES)      # read here, by `decide`

    def applies(self, state: SearchState) -> bool:
        return True

    def run(self, state: SearchState) -> None:
        state.analysis = query.analyse(state.request.text, today=state.request.now.date())
        route = decide(state.analysis, state.request.on, state.searcher.index is not None,
                       state.searcher.index_problem)
        if route.problem:
            state.warn(route.problem)
        state.route, state.window, state.sought = route.name, route.window, route.sought
