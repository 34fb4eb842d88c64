"""The fusion features: what linear fusion scores each candidate on, and what the rerank adds again.

A feature has a `name` (its key in the fusion), a `weight` in linear fusion, a `blend` after the
rerank (0: not added again; both read from the ranking profile, ranking.py sums them), `shown` (its key
in a hit's stage_scores, or None) and
`score(state, uris)`. A feature whose `applies` is False this query is left out of both. A new
feature is one class here and one line in FEATURES, whose order is the order of the sums.
"""

from __future__ import annotations

from typing import Protocol

from muninn.core.ranking_profile import Ranking
from muninn.plugins.search.state import SearchState


class Feature(Protocol):
    name: str
    shown: str | None

    def weight(self, r: Ranking) -> float: ...

    def blend(self, r: Ranking) -> float: ...

    def applies(self, state: SearchState) -> bool: ...

    def score(self, state: SearchState, uris: list[str]) -> dict[str, float]: ...


class _Base:
    shown: str | None = None

    def blend(self, r: Ranking) -> float:
        return 0.0

    def applies(self, state: SearchState) -> bool:
        return True


class Keyword(_Base):
    """BM25 of the sought words: a candidate BM25 does not match scores 0."""

    name = "keyword"

    def weight(self, r: Ranking) -> float:
        return r.keyword_weight

    def score(self, state: SearchState, uris: list[str]) -> dict[str, float]:
        assert state.searcher.index is not None
        return state.searcher.index.scores(state.match, uris)


class FileCosine(_Base):
    """The sought words' cosine to the whole file (both cosines come from the linear stage's one sidecar call)."""

    name, shown = "vector", "file_cos"

    def weight(self, r: Ranking) -> float:
        return r.vector_weight

    def score(self, state: SearchState, uris: list[str]) -> dict[str, float]:
        return state.cosines["file"]


class FactCosine(_Base):
    """The cosine to the fact alone, without its neighbouring context."""

    name, shown = "fact", "fact_cos"

    def weight(self, r: Ranking) -> float:
        return r.fact_weight

    def score(self, state: SearchState, uris: list[str]) -> dict[str, float]:
        return state.cosines["fact"]


class BestWindow(_Base):
    """The best cosine over the fact's windows (windows.py): a buried paragraph the fact's own vector
    never reads. Off (not computed) at window_weight 0."""

    name, shown = "window", "window_cos"

    def weight(self, r: Ranking) -> float:
        return r.window_weight

    def applies(self, state: SearchState) -> bool:
        return "window" in state.cosines

    def score(self, state: SearchState, uris: list[str]) -> dict[str, float]:
        return state.cosines["window"]


class BestPassage(_Base):
    """Unit section: the best cosine over the passages of the candidate's whole section (stages/sections.py),
    every part of a section scoring its section's best."""

    name, shown = "passage", "passage_cos"

    def weight(self, r: Ranking) -> float:
        return r.passage_weight

    def applies(self, state: SearchState) -> bool:
        return "passage" in state.cosines

    def score(self, state: SearchState, uris: list[str]) -> dict[str, float]:
        return state.cosines["passage"]


class SecondCosine(_Base):
    """The file's cosine under embed.second_model: a second embedder's view of the same candidates. The two
    models miss different questions (MiniLM wins on the Debian manuals, e5 on conversations), and the sum
    keeps what either finds (evals/results/second_model.md). Off (not computed) at second_weight 0."""

    name, shown = "second", "second_cos"

    def weight(self, r: Ranking) -> float:
        return r.second_weight

    def applies(self, state: SearchState) -> bool:
        return "second" in state.cosines

    def score(self, state: SearchState, uris: list[str]) -> dict[str, float]:
        return state.cosines["second"]


class Header(_Base):
    """How much of the query a file's title or breadcrumb names, on the facet words only (those that
    head at least `header_min_share` of the indexed files under the target: a speaker, a project).
    Added again after the rerank: a cross-encoder reads "Caroline said" as two words, not as who said it."""

    name, shown = "header", "header"

    def weight(self, r: Ranking) -> float:
        return r.header_weight

    def blend(self, r: Ranking) -> float:
        return r.header_blend

    def score(self, state: SearchState, uris: list[str]) -> dict[str, float]:
        index, ranking, docs = state.searcher.index, state.ranking, state.docs
        assert index is not None and state.analysis is not None
        if not ranking.header_weight:
            return {}
        terms = state.analysis.terms
        # Only words some candidate's header names can count: most queries need no index lookup.
        named = set(terms) & set().union(*(docs[u].header_words for u in uris))
        if not named:
            return {}
        shares = index.header_share(sorted(named), state.request.targets)
        facets = {w for w, share in shares.items() if share >= ranking.header_min_share}
        return {u: docs[u].header_match(terms, facets) for u in uris} if facets else {}


class DateMatch(_Base):
    """How near a file's date is to the days the query names (1 inside, less a day either side).
    Added again after the rerank: a cross-encoder cannot tell that 2 May is the day after 1 May."""

    name, shown = "date", "date"

    def weight(self, r: Ranking) -> float:
        return r.date_weight

    def blend(self, r: Ranking) -> float:
        return r.date_blend

    def applies(self, state: SearchState) -> bool:
        return state.window is not None

    def score(self, state: SearchState, uris: list[str]) -> dict[str, float]:
        assert state.window is not None
        return {u: state.window.match(state.docs[u].date, state.ranking.date_slack_days) for u in uris}


# The order of the sums (linear fusion's and the rerank's blend).
FEATURES: tuple[Feature, ...] = (Keyword(), FileCosine(), FactCosine(), BestWindow(), SecondCosine(), Header(),
                                 DateMatch(), BestPassage())
