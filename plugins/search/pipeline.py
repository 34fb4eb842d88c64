"""The search pipeline: the ordered list of stages below, over one shared state (state.py).

Stages gather evidence (the route, candidate lists, content, features, the cross-encoder's scores, dates);
every step that turns evidence into order is in ranking.py, under the ranking profile
(muninn/core/ranking_profile.py). A stage with a switch can be turned off in `muninn.yaml` (`search:`), per
call and by a `--no-<switch>` flag; every fallback is written into `SearchResult.warnings`.

A new built-in stage is one line in STAGES, in pipeline order. An outside plugin adds a stage through the
`register_stages` hook: it runs after the built-ins, on their final order (the plugin registers STAGES
through the same hook, first).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import threading
import time
from collections.abc import Callable, Sequence
from concurrent import futures
from pathlib import Path
from typing import TYPE_CHECKING

from muninn.core import registry
from muninn.core.config import Settings
from muninn.guards.undeclared.detect import hide_found
from muninn.plugins.search import briefing as briefmod
from muninn.plugins.search import doc as docmod
from muninn.plugins.search import keyword, outage, relevance
from muninn.plugins.search.request import SearchRequest, Switch
from muninn.plugins.search.stages import content, fusion, keyword_stage, order, query_vectors, reach, route, scope
from muninn.plugins.search.stages import sections as section_stages
from muninn.plugins.search.stages.content import ContentFetcher
from muninn.plugins.search.stages.rerank_stage import Rerank, rerank_text
from muninn.plugins.search.stages.vector import Vector, VectorSource
from muninn.plugins.search.state import SearchState, Stage
from muninn.plugins.search.types import Candidate, Hit, Reranker, SearchResult

if TYPE_CHECKING:
    from muninn.core.client import OpenViking

__all__ = ["STAGES", "Searcher", "rerank_text", "search", "stage_switches"]

# The pipeline, in order. The first decides the route and what is sought; the question's vectors are then
# asked beside find; the candidates are cut to the reader's scope, fused, read, scored and ordered.
STAGES: tuple[Stage, ...] = (
    route.Analyse(), query_vectors.QueryVectors(), Vector(), keyword_stage.Keyword(), keyword_stage.Dated(),
    reach.Reach(), scope.Scope(), fusion.Fusion(), content.Content(), content.Since(), section_stages.Passages(),
    fusion.Linear(), section_stages.OnePerSection(), Rerank(), order.Recency(), order.Pin(), order.Cap(),
)


def stage_switches() -> tuple[Switch, ...]:
    """The switches of the registered stages (their own, and those a stage reads itself), in pipeline order."""
    out: list[Switch] = []
    for stage in registry.stages():
        out += getattr(stage, "switches", ())
        if stage.switch is not None:
            out.append(stage.switch)
    return tuple(out)


class Searcher:
    """Holds what is worth keeping between queries: the client, the index, the content cache and
    the loaded reranker. `search()` builds one per call; a batch or the MCP server keeps one."""

    def __init__(self, settings: Settings, client: OpenViking | None = None, index: Path | str | None = None,
                 reranker: Reranker | None = None, index_fix: str = "muninn search-index",
                 readable: Callable[[str], bool] | None = None) -> None:
        self.settings = settings
        self.readable = readable    # a policy reader's decision: what it refuses is never a candidate
        self.cfg = settings.search
        self.ranking = settings.ranking
        # Imported here: `muninn search` answered by `muninn serve` loads the stage list, not the clients.
        from muninn.core.client import OpenViking
        from muninn.plugins.search import dense

        self.client = client or OpenViking.user(settings)
        self.owns_client = client is None
        path = Path(index) if index else settings.paths.search_index()
        self.index: keyword.KeywordIndex | None = None
        self.index_problem = ""
        try:
            self.index = keyword.KeywordIndex(path, fix=index_fix)  # the fix names this reader's command
        except keyword.KeywordIndexError as exc:
            self.index_problem = str(exc)
        # The vector call has its own limit (search.timeout): past it the search answers from keywords.
        self._vector_client = self.client.with_timeout(self.cfg.timeout)
        self.vector = VectorSource(self._vector_client)
        self.watch = outage.ServerWatch()
        self.fetcher = ContentFetcher(self.client, self.index, workers=self.cfg.fetch_workers)
        self.dense = dense.DenseScorer(settings.embed, dense.cache_path(path), timeout=self.cfg.timeout)
        second = settings.second_embed
        self.second = (dense.DenseScorer(second, dense.cache_path(path, second=True), timeout=self.cfg.timeout,
                                         strict=True) if second is not None else None)
        self._reranker = reranker
        self._rerank_given = reranker is not None
        self._rerank_cfg = self.cfg.rerank
        self._rerank_problem = ""
        self._rerank_lock = threading.Lock()   # a warm-up thread and the first search load it once
        # Stages and features gathered here, before a batch's threads each ask the registry first.
        registry.stages(), registry.features()

    def drop_index(self, problem: str) -> None:
        """Stop using a keyword index found damaged mid-search; later stages see no index."""
        if self.index:
            self.index.close()
        self.index, self.index_problem, self.fetcher.index = None, problem, None

    def close(self) -> None:
        self._vector_client.close()
        self.dense.close()
        if self.second is not None:
            self.second.close()
        if self.index:
            self.index.close()
        if self.owns_client:
            self.client.close()

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def reranker(self) -> Reranker | None:
        with self._rerank_lock:
            if self._reranker is None and not self._rerank_problem:
                from muninn.plugins.search import rerank

                try:
                    self._reranker = rerank.load(self._rerank_cfg, self.ranking)
                except rerank.RerankUnavailable as exc:
                    self._rerank_problem = str(exc)
            return self._reranker

    def at_once(self, workers: int) -> None:
        """Questions will be asked `workers` at a time (a batch, an eval): each then scores its pairs one
        after another on one core, unless search.rerank.threads is set; alone, a question scores a batch
        of pairs per core. Same scores either way (evals/results/decisions.md#batch-threads)."""
        if workers <= 1 or self._rerank_given or self.cfg.rerank.threads is not None:
            return
        with self._rerank_lock:
            self._rerank_cfg = self.cfg.rerank.model_copy(update={"threads": 1})
            self._reranker, self._rerank_problem = None, ""     # loaded again (once) with one thread

    def warm_up(self) -> None:
        """Load the reranker (when rerank is on) and run it once, so the first real search is as fast
        as the next: loading and the first inference took seconds on 2 busy cores."""
        if not self.cfg.rerank.enabled:
            return
        if (model := self.reranker()) is not None:
            model.rerank("warm up", ["the model is loaded"])

    @property
    def rerank_problem(self) -> str:
        return self._rerank_problem

    def search(self, text: str, *, k: int | None = None, target: str | Sequence[str] | None = None,
               since: str | None = None, briefing: bool = False, tokens: int | None = None,
               now: dt.datetime | None = None, min_score: float | None = None, **switches: bool | None) -> SearchResult:
        """One query through the registered stages, over one folder or several (`target` a list: their
        candidates are fused and reranked together, one ranking). `switches` are the stages' switches by
        name (rerank, hybrid, routing, dates, recency): None or absent means "as configured in muninn.yaml"."""
        request = SearchRequest.resolve(self.cfg, stage_switches(), text, k=k, target=target, since=since,
                                        briefing=briefing, tokens=tokens, now=now, min_score=min_score,
                                        overrides=switches)
        state = SearchState(request=request, searcher=self)
        try:
            run(registry.stages(), state)
        finally:
            # A search that ended before fusion leaves its vectors being asked: none may still be in flight
            # when the caller closes the Searcher and its sidecar clients.
            futures.wait(state.query_vectors.values(), timeout=self.cfg.timeout)
        return result_of(state)


def run(stages: Sequence[Stage], state: SearchState) -> None:
    """Each stage in order, unless its switch is off or it has nothing to do; timed here, not in the stage."""
    for stage in stages:
        if stage.switch is not None and not state.request.on(stage.switch.name):
            continue
        if not stage.applies(state):
            continue
        t0 = time.perf_counter()
        stage.run(state)
        state.timings[stage.name] = round((time.perf_counter() - t0) * 1000, 2)


def result_of(state: SearchState) -> SearchResult:
    request, window = state.request, state.window
    terms = state.analysis.terms if state.analysis else []
    best = relevance.best_of(c.stage_scores for c in state.fused)
    hits, said = relevance.judge([_hit(c, state.docs[c.uri], state.reranked_by, best) for c in state.fused],
                                 state.ranking.strong_match, request.min_score)
    # Only what is shown is cut and checked for secrets (a briefing may show any of them): 40-60 candidates
    # took 4-33 ms of a warm search, where the top k take a few.
    shown = [_cut(h, state.docs[h.uri], terms, state.ranking.passage_window, _passage(state, h.uri))
             for h in (hits if request.briefing else hits[:request.k])]
    for message in said:
        state.warn(message)
    named = None
    if window is not None:
        assert state.sought is not None
        named = {"from": window.start.isoformat(), "to": window.end.isoformat(),
                 "slack_days": state.ranking.date_slack_days, "searched": state.sought.query}
    result = SearchResult(query=request.text, route=state.route, hits=shown, warnings=state.warnings,
                          timings_ms=state.timings, reranker=state.reranked_by, dates=named)
    if request.briefing:
        result.briefing, result.hits = briefmod.build(shown, request.tokens)
    return result


def _hit(c: Candidate, d: docmod.Doc, reranker: str | None = None, best: float | None = None) -> Hit:
    """A candidate as a hit, its title and snippet not yet cut (_cut)."""
    return Hit(uri=c.uri, title="", breadcrumb=d.breadcrumb, score=round(c.score, 6), stage_scores=c.stage_scores,
               date=d.date.isoformat() if d.date else None, snippet="", source=d.source,
               relevance=relevance.of(c.stage_scores, reranker, best))


def _passage(state: SearchState, uri: str) -> str | None:
    """Unit section: the hit's best passage (its own part's text, without the breadcrumb), else None."""
    key = state.sections.get(uri)
    got = state.passages.get(key) if key else None
    return got[1].split("\n\n", 1)[-1] if got and got[0] == uri else None


def _cut(hit: Hit, d: docmod.Doc, terms: list[str], window: int, passage: str | None = None) -> Hit:
    # Undeclared secrets in a file no export wrote are hidden in what is cut from it as the whole
    # file decides (guards/undeclared/detect.py), so a snippet never shows what recall_read hides.
    snippet = passage if passage is not None else docmod.snippet(d, terms=terms, window=window)
    return dataclasses.replace(hit, title=hide_found(d.title, d.text), snippet=hide_found(snippet, d.text))


def search(query: str, *, k: int | None = None, target: str | None = None, since: str | None = None,
           briefing: bool = False, tokens: int | None = None, settings: Settings | None = None,
           client: OpenViking | None = None, index: Path | str | None = None, **switches: bool | None) -> SearchResult:
    """One search. `None` flags mean "as configured in muninn.yaml". The identity is `client`,
    else `OpenViking.user(settings)`; the keyword index is `index`, else that identity's default."""
    from muninn.core import config

    settings = settings or config.load()
    with Searcher(settings, client=client, index=index) as searcher:
        return searcher.search(query, k=k, target=target, since=since, briefing=briefing, tokens=tokens, **switches)
