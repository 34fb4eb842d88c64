"""The search pipeline: route -> vector + keyword (+ dated) candidates -> RRF -> content -> linear
fusion (BM25, file and fact cosines, header and date match) -> rerank -> recency -> per-file cap ->
top k (or a briefing).
Every stage can be switched off in `muninn.yaml` (`search:`) and per call; every fallback is
written into `SearchResult.warnings`.
"""

from __future__ import annotations

import datetime as dt
import math
import time
from contextlib import contextmanager
from pathlib import Path

from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.plugins.search import briefing as briefmod
from muninn.plugins.search import cap, dense, fusion, keyword, pin, query, query_dates, rerank
from muninn.plugins.search import doc as docmod
from muninn.plugins.search import recency as recency_mod
from muninn.plugins.search.content import ContentFetcher
from muninn.plugins.search.stages import (
    Candidate,
    Hit,
    Reranker,
    SearchError,
    SearchResult,
    check_candidates,
    check_scores,
)
from muninn.plugins.search.vector import VectorSource


class Searcher:
    """Holds what is worth keeping between queries: the client, the index, the content cache and
    the loaded reranker. `search()` builds one per call; a batch or the MCP server keeps one."""

    def __init__(self, settings: Settings, client: OpenViking | None = None, index: Path | str | None = None,
                 reranker: Reranker | None = None) -> None:
        self.settings = settings
        self.cfg = settings.search
        self.client = client or OpenViking.user(settings)
        self._own_client = client is None
        path = Path(index) if index else settings.paths.search_index()
        self.index: keyword.KeywordIndex | None = None
        self.index_problem = ""
        try:
            self.index = keyword.KeywordIndex(path)
        except keyword.IndexError_ as exc:
            self.index_problem = str(exc)
        self.vector = VectorSource(self.client)
        self.fetcher = ContentFetcher(self.client, self.index, workers=self.cfg.fetch_workers)
        self.dense = dense.DenseScorer(settings.embed, path.with_suffix(".vectors.sqlite"))
        self._reranker = reranker
        self._rerank_problem = ""

    def close(self) -> None:
        self.dense.close()
        if self.index:
            self.index.close()
        if self._own_client:
            self.client.close()

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def reranker(self) -> Reranker | None:
        if self._reranker is None and not self._rerank_problem:
            try:
                self._reranker = rerank.load(self.cfg.rerank)
            except rerank.RerankUnavailable as exc:
                self._rerank_problem = str(exc)
        return self._reranker

    # --- the pipeline ---

    def search(self, text: str, *, k: int | None = None, target: str | None = None, since: str | None = None,
               rerank: bool | None = None, hybrid: bool | None = None, routing: bool | None = None,
               recency: bool | None = None, dates: bool | None = None, briefing: bool = False,
               tokens: int | None = None, now: dt.datetime | None = None) -> SearchResult:
        cfg = self.cfg
        text = text.strip()
        if not text:
            raise SearchError("empty query", fix="pass the words or identifier to look for")
        k = k or cfg.k
        target = (target or cfg.target).rstrip("/")
        now = now or dt.datetime.now(dt.UTC)
        since_at = None
        if since:
            since_at = recency_mod.parse_since(since, now)
            if since_at is None:
                raise SearchError(f"--since {since!r} is neither a span (7d, 24h, 30m, 2w) nor an ISO date")
        use_rerank = cfg.rerank.enabled if rerank is None else rerank
        use_hybrid = cfg.hybrid if hybrid is None else hybrid
        use_routing = cfg.routing if routing is None else routing
        use_recency = cfg.recency if recency is None else recency
        use_dates = cfg.dates if dates is None else dates
        warnings: list[str] = []
        timings: dict[str, float] = {}

        @contextmanager
        def timed(stage: str):
            t0 = time.perf_counter()
            yield
            timings[stage] = round((time.perf_counter() - t0) * 1000, 2)

        with timed("analyse"):
            analysis = query.analyse(text, today=now.date())
            route = "hybrid" if use_hybrid else "vector"
            if use_routing and analysis.is_identifier:
                route = "keyword"
            if route != "vector" and self.index is None:
                warnings.append(f"keyword stage skipped: {self.index_problem}")
                route = "vector"
            window = analysis.window if use_dates and route == "hybrid" else None
            # Vectors and BM25 look for the rest of the question; the header match and the reranker read it whole.
            sought = analysis.without_dates() if window is not None else analysis

        lists: dict[str, list[Candidate]] = {}
        if route != "keyword":
            with timed("vector"):
                got = self.vector.candidates(sought.query, target, cfg.vector_top)
                lists["vector"] = check_candidates("vector", got, target, cfg.vector_top)
        match = query.fts_query(sought)
        if route != "vector" and self.index is not None:
            with timed("keyword"):
                got = self.index.candidates(match, target, cfg.keyword_top)
                lists["keyword"] = check_candidates("keyword", got, target, cfg.keyword_top)
        if window is not None and self.index is not None:
            # The lists above looked for the rest of the question; the files dated then get a list of their own.
            with timed("dated"):
                got = self.index.candidates(match, target, cfg.keyword_top, between=window.bounds(cfg.date_slack_days))
                lists["dated"] = check_candidates("dated", got, target, cfg.keyword_top)
        with timed("fusion"):
            fused = fusion.rrf(lists, cfg.rrf_k, {"vector": cfg.vector_weight, "keyword": cfg.keyword_weight,
                                                  "dated": cfg.keyword_weight})

        with timed("content"):
            docs = self.fetcher.fetch([c.uri for c in fused])
        fused = [c for c in fused if c.uri in docs]
        if since_at is not None:
            fused = [c for c in fused if (d := docs[c.uri].date) is not None and d >= since_at]
        features: dict[str, dict[str, float]] = {}
        if cfg.fusion == "linear" and {"vector", "keyword"} <= lists.keys() and fused:
            with timed("linear"):
                fused, features = self._linear(sought.query, match, analysis.terms, window, target, fused, docs,
                                               warnings)

        reranked_by = None
        if use_rerank and fused:
            with timed("rerank"):
                fused, reranked_by = self._rerank(text, fused, docs, features, warnings)
        # A question that names its days asks about then, not about the newest: no recency prior.
        if use_recency and fused and window is None:
            with timed("recency"):
                dated = {c.uri: docs[c.uri].date for c in fused}
                fused = recency_mod.apply(fused, dated, cfg.half_life_days, cfg.recency_weight, now)
        with timed("cap"):
            fused = pin.apply(text, fused, docs)
            capped = cap.per_file(fused, {c.uri: docs[c.uri].file_key for c in fused}, cfg.per_file)

        hits = [_hit(c, docs[c.uri]) for c in capped]
        named = ({"from": window.start.isoformat(), "to": window.end.isoformat(), "slack_days": cfg.date_slack_days,
                  "searched": sought.query} if window is not None else None)
        result = SearchResult(query=text, route=route, hits=hits[:k], warnings=warnings, timings_ms=timings,
                              reranker=reranked_by, dates=named)
        if briefing:
            result.briefing, result.hits = briefmod.build(hits, tokens or cfg.briefing_tokens)
        return result

    def _linear(self, text: str, match: str, terms: list[str], window: query_dates.Window | None, target: str,
                fused: list[Candidate], docs: dict[str, docmod.Doc],
                warnings: list[str]) -> tuple[list[Candidate], dict[str, dict[str, float]]]:
        """Score the union of the lists on the same features (BM25, file and fact cosines, header
        and date match); RRF order stays if the sidecar is down. Returns the features too: the
        rerank adds the header and date match again."""
        assert self.index is not None
        uris = [c.uri for c in fused]
        try:
            # One sidecar call for both texts of every candidate (only the uncached ones are sent).
            cos = self.dense.cosines(text, [docs[u].text for u in uris] + [docs[u].fact or docs[u].body for u in uris])
        except dense.DenseUnavailable as exc:
            warnings.append(f"linear fusion skipped, results are in RRF order: {exc}")
            return fused, {}
        file_cos, fact_cos = cos[:len(uris)], cos[len(uris):]
        features = {"keyword": self.index.scores(match, uris),
                    "vector": dict(zip(uris, file_cos, strict=True)),
                    "fact": dict(zip(uris, fact_cos, strict=True)),
                    "header": self._header(terms, target, uris, docs),
                    "date": {u: window.match(docs[u].date, self.cfg.date_slack_days) for u in uris} if window else {}}
        for c in fused:
            c.stage_scores["file_cos"] = round(features["vector"][c.uri], 4)
            c.stage_scores["fact_cos"] = round(features["fact"][c.uri], 4)
            c.stage_scores["header"] = round(features["header"].get(c.uri, 0.0), 4)
            if window:
                c.stage_scores["date"] = round(features["date"][c.uri], 4)
        weights = {"keyword": self.cfg.keyword_weight, "vector": self.cfg.vector_weight,
                   "fact": self.cfg.fact_weight, "header": self.cfg.header_weight, "date": self.cfg.date_weight}
        return fusion.linear(fused, features, weights), features

    def _header(self, terms: list[str], target: str, uris: list[str], docs: dict[str, docmod.Doc]) -> dict[str, float]:
        """The header match of each candidate, on the query words that head at least
        `header_min_share` of the indexed files under `target` (facets); {} when the feature is off or
        nothing qualifies."""
        assert self.index is not None
        if not self.cfg.header_weight:
            return {}
        # Only words some candidate's header names can count: most queries need no index lookup.
        named = set(terms) & set().union(*(docs[u].header_words for u in uris))
        if not named:
            return {}
        shares = self.index.header_share(sorted(named), target)
        facets = {w for w, share in shares.items() if share >= self.cfg.header_min_share}
        return {u: docs[u].header_match(terms, facets) for u in uris} if facets else {}

    def _rerank(self, text: str, fused: list[Candidate], docs: dict[str, docmod.Doc],
                features: dict[str, dict[str, float]], warnings: list[str]) -> tuple[list[Candidate], str | None]:
        model = self.reranker()
        if model is None:
            warnings.append(f"rerank skipped, results are in fusion order: {self._rerank_problem}")
            return fused, None
        head, tail = fused[: self.cfg.rerank.candidates], fused[self.cfg.rerank.candidates:]
        texts = [rerank_text(docs[c.uri], self.cfg.content_chars) for c in head]
        try:
            scores = check_scores(model.name, model.rerank(text, texts), len(texts))
        except rerank.RerankUnavailable as exc:
            warnings.append(f"rerank skipped, results are in fusion order: {exc}")
            return fused, None
        before = [c.score for c in head]
        for c, s in zip(head, scores, strict=True):
            c.stage_scores["rerank"] = round(s, 5)
        # Rank in logit space, z-scored: sigmoid scores saturate (0.0001 vs 0.0005), and the recency
        # prior that follows would then reorder every weak candidate by date alone. `blend` keeps a
        # little of the retrieval evidence: z(rerank logit) + blend * z(fusion score), and the header
        # and date match again: a cross-encoder reads "Caroline said" as two words, not as who said
        # it, and cannot tell that 2 May is the day after 1 May.
        cfg = self.cfg.rerank
        extra = [(weight, fusion.zscores([features.get(name, {}).get(c.uri, 0.0) for c in head]))
                 for name, weight in (("header", cfg.header_blend), ("date", cfg.date_blend)) if weight]
        for i, (c, r, f) in enumerate(zip(head, fusion.zscores([_logit(s) for s in scores]), fusion.zscores(before),
                                          strict=True)):
            c.score = r + cfg.blend * f + sum(weight * z[i] for weight, z in extra)
        head.sort(key=lambda c: -c.score)
        # Candidates the reranker did not see stay below the ones it did, in their order, without
        # stretching the range that the recency prior scales to.
        floor = min((c.score for c in head), default=0.0)
        for i, c in enumerate(tail, start=1):
            c.score = floor - 1e-3 * i
        return head + tail, getattr(model, "model", None) or model.name


def _logit(p: float) -> float:
    """Back from a 0..1 rerank score to the model's logit, where z-scores are meaningful."""
    p = min(max(p, 1e-7), 1 - 1e-7)
    return math.log(p / (1 - p))


def rerank_text(d: docmod.Doc, chars: int) -> str:
    """What the cross-encoder reads: breadcrumb and title, the fact, then its neighbouring context,
    marked as such, in what is left of `chars`. On LoCoMo dev, reading the context after the fact
    lifted hit@10 from 0.862 to 0.892 over the fact alone (evals/results/locomo.md): a reply is
    judged with the line it answers."""
    lead = " > ".join(x for x in (d.breadcrumb, d.title) if x)
    body = d.fact or d.body
    if lead and body.startswith(d.title):
        lead = d.breadcrumb      # a header line that is the title is not said twice
    text = f"{lead}\n{body}" if lead else body
    if d.context and len(text) < chars:
        text += "\n(context: " + " ".join(d.context.split()) + ")"
    return text[:chars]


def _hit(c: Candidate, d: docmod.Doc) -> Hit:
    return Hit(uri=c.uri, title=d.title, breadcrumb=d.breadcrumb, score=round(c.score, 6),
               stage_scores=c.stage_scores, date=d.date.isoformat() if d.date else None,
               snippet=docmod.snippet(d), source=d.source)


def search(query: str, *, k: int | None = None, target: str | None = None, since: str | None = None,
           rerank: bool | None = None, hybrid: bool | None = None, routing: bool | None = None,
           recency: bool | None = None, dates: bool | None = None, briefing: bool = False,
           tokens: int | None = None, settings: Settings | None = None, client: OpenViking | None = None,
           index: Path | str | None = None) -> SearchResult:
    """One search. `None` flags mean "as configured in muninn.yaml". The identity is `client`,
    else `OpenViking.user(settings)`; the keyword index is `index`, else that identity's default."""
    from muninn.core import config

    settings = settings or config.load()
    with Searcher(settings, client=client, index=index) as searcher:
        return searcher.search(query, k=k, target=target, since=since, rerank=rerank, hybrid=hybrid,
                               routing=routing, recency=recency, dates=dates, briefing=briefing, tokens=tokens)
