"""The one state every stage reads and writes, the services it carries, and the Stage contract.

A stage is a small object in `plugins/search/stages/`: a `name` (its key in `timings_ms`), the
`switch` that turns it off (or None), `applies(state)` (whether there is work for it on this query)
and `run(state)`; a stage that reads several switches itself lists them in `switches`. The runner in
pipeline.py times each stage it runs; no stage times itself. Stages gather evidence; what order it
makes is ranking.py's.

The state carries `Services`, the few things stages use between queries (the keyword index, the
vectors, the content fetcher, the reranker); pipeline.Searcher is one, and state.py needs nothing
of the pipeline, so no stage reaches back to it.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from muninn.core.config import SearchSettings, Settings
from muninn.core.ranking_profile import Ranking
from muninn.plugins.search import query
from muninn.plugins.search.doc import Doc
from muninn.plugins.search.query import Analysis
from muninn.plugins.search.query_dates import Window
from muninn.plugins.search.request import SearchRequest, Switch
from muninn.plugins.search.types import Candidate, CandidateSource, Reranker

if TYPE_CHECKING:  # types only: none of these imports the stages
    from muninn.core.client import OpenViking
    from muninn.plugins.search.dense import DenseScorer
    from muninn.plugins.search.keyword import KeywordIndex
    from muninn.plugins.search.outage import ServerWatch


class Fetcher(Protocol):
    def fetch(self, uris: list[str], server: bool = True) -> dict[str, Doc]: ...


@runtime_checkable
class Services(Protocol):
    """What the stages use of the searcher that runs them."""

    settings: Settings
    cfg: SearchSettings
    ranking: Ranking                    # the profile beside the embedder, with search.ranking's overrides
    client: OpenViking
    index: KeywordIndex | None          # None when there is none, or it was found damaged
    index_problem: str
    vector: CandidateSource
    fetcher: Fetcher
    dense: DenseScorer
    second: DenseScorer | None          # embed.second_model's scorer, None when it is off
    watch: ServerWatch
    readable: Callable[[str], bool] | None   # the reader's policy decision (stages/scope.py), None: no reader

    def drop_index(self, problem: str) -> None: ...

    def reranker(self) -> Reranker | None: ...

    @property
    def rerank_problem(self) -> str: ...


@dataclass
class SearchState:
    request: SearchRequest
    searcher: Services
    analysis: Analysis | None = None
    sought: Analysis | None = None      # what vectors and BM25 look for: the query less the days it names
    route: str = "vector"               # "keyword" (identifier), "hybrid", "vector"
    window: Window | None = None        # the days the query names, when they are used
    lists: dict[str, list[Candidate]] = field(default_factory=dict)
    fused: list[Candidate] = field(default_factory=list)
    docs: dict[str, Doc] = field(default_factory=dict)
    cosines: dict[str, dict[str, float]] = field(default_factory=dict)    # "file", "fact", "window": uri -> cosine
    features: dict[str, dict[str, float]] = field(default_factory=dict)   # fusion feature -> uri -> value
    warnings: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    reranked_by: str | None = None
    # The question's vector under each scorer ("dense", "second"), being asked beside find (stages/query_vectors.py)
    query_vectors: dict[str, Future] = field(default_factory=dict)
    # ranking.unit section (stages/sections.py): each candidate's section key, and each section's best
    # passage as (part uri, passage text, cosine)
    sections: dict[str, str] = field(default_factory=dict)
    passages: dict[str, tuple[str, str, float]] = field(default_factory=dict)
    offline: bool = False               # OpenViking is away: answered from the keyword index, said in warnings

    @property
    def cfg(self) -> SearchSettings:
        return self.searcher.cfg

    @property
    def ranking(self) -> Ranking:
        return self.searcher.ranking

    @property
    def match(self) -> str:
        """The FTS5 expression of what is sought."""
        assert self.sought is not None
        return query.fts_query(self.sought)

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)


class Stage(Protocol):
    name: str
    switch: Switch | None

    def applies(self, state: SearchState) -> bool: ...

    def run(self, state: SearchState) -> None: ...
