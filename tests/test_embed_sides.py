"""A prompted model (e5) reads a question after its query prompt and a stored text after its passage prompt,
on every path a text reaches the sidecar: OpenViking (which says `input_type` once ov.conf asks it to),
muninn's own dense scorer and the plain dense baseline (which say it themselves), and a client that says
nothing (a fact file is a passage, anything else a question). An unprompted model (bge, MiniLM) reads every
text exactly as before, and its stored vectors, cache keys and OpenViking identity do not move."""

from __future__ import annotations

import pytest
from conftest import RecordingEncoder
from fastapi.testclient import TestClient

from muninn.core import embed_prompts as prompts
from muninn.core import factfile
from muninn.core.config import EmbedSettings, Settings
from muninn.evals.lab.corpora.baselines import Dense, settings_for
from muninn.plugins.embed.server import create_app
from muninn.plugins.search.dense import DenseScorer
from muninn.plugins.stack import lifecycle as stack

E5 = prompts.Prompts(query="query: ", passage="passage: ")
FACT = factfile.render(factfile.FactFile(
    id="notes/pg.md#wal", source="notes", kind="note", title="WAL", body="Set `wal_level = replica` and restart.",
    lead="Note section “WAL” from pg.md.", breadcrumb=("PostgreSQL", "WAL"), tags=("pg",), date="2025-01-02",
    source_path="pg.md")).text
QUESTION = "what is wal_level?"


def _read(model: RecordingEncoder, body: dict, p: prompts.Prompts = E5, fact_text: bool = True) -> list[str]:
    client = TestClient(create_app(model, 8, "m", fact_text=fact_text, prompts=p))
    resp = client.post("/v1/embeddings", json=body)
    assert resp.status_code == 200, resp.text
    return model.seen


@pytest.mark.parametrize(("input_type", "side"), [("query", "query: "), ("passage", "passage: "),
                                                  ("document", "passage: ")])
@pytest.mark.parametrize("text", [QUESTION, FACT, "", "passage: looks marked but is not"])
def test_the_request_says_the_side(input_type: str, side: str, text: str) -> None:
    seen = _read(RecordingEncoder(), {"input": [text], "input_type": input_type})
    assert seen == [side + factfile.embed_text(text)]


@pytest.mark.parametrize(("text", "side"), [(FACT, "passage: "), (QUESTION, "query: "),
                                            ("---\ntitle: plain markdown, no id\n---\nbody", "query: "),
                                            ("passage: a question that starts with the word", "query: ")])
def test_unsaid_a_fact_file_is_a_passage_and_anything_else_a_question(text: str, side: str) -> None:
    assert _read(RecordingEncoder(), {"input": [text]}) == [side + factfile.embed_text(text)]


@pytest.mark.parametrize("fact_text", [True, False])
def test_the_prompt_goes_before_the_text_the_rule_keeps(fact_text: bool) -> None:
    seen = _read(RecordingEncoder(), {"input": [FACT, QUESTION]}, fact_text=fact_text)
    assert seen == ["passage: " + (factfile.embed_text(FACT) if fact_text else FACT), "query: " + QUESTION]


@pytest.mark.parametrize("input_type", [None, "query", "passage", "document"])
def test_an_unprompted_model_reads_every_text_as_before(input_type: str | None) -> None:
    body = {"input": [FACT, QUESTION], **({"input_type": input_type} if input_type else {})}
    assert _read(RecordingEncoder(), body, p=prompts.Prompts()) == [factfile.embed_text(FACT), QUESTION]


@pytest.mark.parametrize("bad", ["search", "QUERY", 1])
def test_an_unknown_side_is_a_400_not_a_guess(bad: object) -> None:
    client = TestClient(create_app(RecordingEncoder(), 8, "m", prompts=E5))
    assert client.post("/v1/embeddings", json={"input": ["x"], "input_type": bad}).status_code == 422


@pytest.mark.parametrize(("settings", "expected"), [
    (EmbedSettings(), E5),                                  # a new workspace's default
    (EmbedSettings(model="BAAI/bge-small-en-v1.5"), prompts.Prompts()),
    (EmbedSettings(model="intfloat/e5-small-v2"), E5),
    (EmbedSettings(model="intfloat/e5-small-v2", query_prompt=""), prompts.Prompts(passage="passage: ")),
    (EmbedSettings(model="/models/my-e5", query_prompt="query: ", passage_prompt="passage: "), E5),
    (EmbedSettings(model="sentence-transformers/all-MiniLM-L6-v2"), prompts.Prompts()),
])
def test_prompts_come_from_the_model_unless_configured(settings: EmbedSettings, expected: prompts.Prompts) -> None:
    assert prompts.for_settings(settings) == expected


def test_openviking_is_asked_to_say_the_side_only_for_a_prompted_model(tmp_path) -> None:
    plain = stack.ov_conf(Settings(home=tmp_path, embed={"model": "BAAI/bge-small-en-v1.5"}))["embedding"]["dense"]
    assert "query_param" not in plain and "document_param" not in plain     # bge's vector identity unchanged
    e5 = stack.ov_conf(Settings(home=tmp_path, embed={"model": "intfloat/e5-small-v2"}))["embedding"]["dense"]
    assert (e5["query_param"], e5["document_param"]) == ("query", "passage")


def _scorer_on(model: RecordingEncoder, settings: EmbedSettings, tmp_path) -> DenseScorer:
    scorer = DenseScorer(settings, tmp_path / "v.sqlite")
    scorer._http.close()
    scorer._http = TestClient(create_app(model, 8, "m", prompts=prompts.for_settings(settings)))
    return scorer


def test_muninns_scorer_sends_the_question_and_the_facts_on_their_sides(tmp_path) -> None:
    model = RecordingEncoder()
    scorer = _scorer_on(model, EmbedSettings(model="intfloat/e5-small-v2"), tmp_path)
    try:
        scorer.cosines(QUESTION, [FACT, "the fact alone"])
    finally:
        scorer.close()
    assert sorted(model.seen) == sorted(["passage: " + factfile.embed_text(FACT), "passage: the fact alone",
                                         "query: " + QUESTION])


def test_a_text_asked_on_both_sides_has_two_cached_vectors(tmp_path) -> None:
    model = RecordingEncoder()
    scorer = _scorer_on(model, EmbedSettings(model="intfloat/e5-small-v2"), tmp_path)
    try:
        cos = scorer.cosines("same words", ["same words"])
    finally:
        scorer.close()
    assert model.seen.count("query: same words") == 1 and model.seen.count("passage: same words") == 1
    assert cos[0] < 0.999     # two vectors, not one text's vector met with itself


def test_an_unprompted_scorer_keeps_its_cache_keys_and_request(tmp_path) -> None:
    model = RecordingEncoder()
    scorer = _scorer_on(model, EmbedSettings(model="BAAI/bge-small-en-v1.5"), tmp_path)
    try:
        assert scorer._key("t", "query") == scorer._key("t", "passage")     # bge caches stay valid
        cos = scorer.cosines("same words", ["same words"])
    finally:
        scorer.close()
    assert model.seen == ["same words"] and cos[0] == pytest.approx(1.0, abs=1e-6)


def test_the_dense_baseline_reads_each_models_own_prompts() -> None:
    for name, seen in (("e5-small-v2", ["passage: a section body", "query: " + QUESTION]),
                       ("bge-small", ["a section body", QUESTION])):
        model = RecordingEncoder()
        cfg = settings_for(name, EmbedSettings(model="BAAI/bge-small-en-v1.5", query_prompt="not this: "))
        Dense(name, ["a section body"], model, prompts.for_settings(cfg)).rank(QUESTION, 1)
        assert model.seen == seen


@pytest.mark.parametrize("extra", [{"encoding_format": "base64"}, {"dimensions": 4}, {}])
def test_a_single_string_input_reads_its_prompt_in_every_reply_shape(extra: dict) -> None:
    seen = _read(RecordingEncoder(), {"input": QUESTION, "input_type": "passage", **extra})
    assert seen == ["passage: " + QUESTION]


def test_a_text_asked_again_is_not_encoded_again_and_its_vector_is_the_same() -> None:
    # OpenViking's find and muninn's linear fusion ask for the same question within milliseconds.
    model = RecordingEncoder()
    client = TestClient(create_app(model, 8, "m", prompts=E5))

    def ask(texts: list[str], input_type: str) -> list[list[float]]:
        resp = client.post("/v1/embeddings", json={"input": texts, "input_type": input_type})
        assert resp.status_code == 200, resp.text
        return [row["embedding"] for row in resp.json()["data"]]

    first = ask([QUESTION], "query")
    assert ask([QUESTION], "query") == first and model.seen == ["query: " + QUESTION]
    # Another side is another text (another prompt): encoded, and not confused with the first.
    assert ask([QUESTION], "passage") != first and model.seen[-1] == "passage: " + QUESTION
    # A batch sends only what is new, in order, once each; its rows come back in the request's order.
    model.seen.clear()
    rows = ask(["a", QUESTION, "b", "a"], "query")
    assert model.seen == ["query: a", "query: b"] and rows[1] == first[0] and rows[0] == rows[3]


def test_the_recent_vectors_are_bounded_and_kept_per_model(monkeypatch) -> None:
    from muninn.plugins.embed import server

    monkeypatch.setattr(server, "RECENT", 3)
    first, second = RecordingEncoder(), RecordingEncoder()
    app = create_app(first, 8, "m", others={"other": lambda: server.Served(second, 8)})
    client = TestClient(app)
    for text in ["q1", "q2", "q3", "q4", "q1"]:      # q1 fell out when q4 came: encoded again
        assert client.post("/v1/embeddings", json={"input": [text]}).status_code == 200
    assert first.seen == ["q1", "q2", "q3", "q4", "q1"]
    assert client.post("/v1/embeddings", json={"input": ["q1"], "model": "other"}).status_code == 200
    assert second.seen == ["q1"]     # the second model's vector is its own, never the first's
