"""A model's query/passage prompts and the unit-length vectors they give (plugins.embed.model.embed), and
vector_lab reading another model through them, on a stub encoder that records what it was asked to read
and returns vectors of any length (it ignores `normalize_embeddings`, as a careless encoder would)."""

from __future__ import annotations

import hashlib
import re
from types import SimpleNamespace

import numpy as np
import pytest

from muninn.core.embed_prompts import Prompts
from muninn.evals.lab.corpora import harness, sources, vector_lab
from muninn.evals.lab.corpora.questions import Question
from muninn.plugins.embed.model import embed

DIM = 64


class StubEncoder:
    """A hashed bag of words: texts that share words point the same way, so a ranking means something.
    `scale` multiplies each text's vector by a factor of its own, which only normalisation undoes."""

    def __init__(self, scale: bool = False, zero_for: str | None = None) -> None:
        self.calls: list[list[str]] = []
        self.scale = scale
        self.zero_for = zero_for

    def encode(self, texts, **_: object) -> np.ndarray:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), DIM), dtype=np.float64)
        for i, text in enumerate(texts):
            if text == self.zero_for:
                continue
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % DIM] += 1.0
            if self.scale:
                out[i] *= 1 + int(hashlib.md5(text.encode()).hexdigest(), 16) % 1000
        return out


PROMPTS = [Prompts(), Prompts(query="query: ", passage="passage: "), Prompts(query="Représente: ", passage="\n")]


@pytest.mark.parametrize("prompts", PROMPTS)
def test_every_text_is_read_once_after_its_own_prefix(prompts: Prompts) -> None:
    stub = StubEncoder()
    texts = ["restic mount /mnt/restic", "", "query: already prefixed", "passage: x"]
    embed(stub, texts, prompts.query)
    embed(stub, texts, prompts.passage)
    assert stub.calls == [[prompts.query + t for t in texts], [prompts.passage + t for t in texts]]


@pytest.mark.parametrize("scale", [False, True])
def test_vectors_are_unit_length_float32_in_input_order_whatever_the_encoder_returns(scale: bool) -> None:
    texts = ["backup timer at 02:15", "nginx reload", "backup timer at 02:15 backup"]
    vecs = embed(StubEncoder(scale=scale), texts)
    assert vecs.dtype == np.float32 and vecs.shape == (3, DIM)
    assert np.linalg.norm(vecs, axis=1) == pytest.approx([1.0] * 3, abs=1e-6)
    raw = StubEncoder().encode(texts)
    assert vecs == pytest.approx(raw / np.linalg.norm(raw, axis=1, keepdims=True), abs=1e-6)


def test_a_zero_vector_stays_zero_and_never_nan() -> None:
    vecs = embed(StubEncoder(scale=True, zero_for="p:nothing"), ["nothing", "something"], "p:")
    assert not np.isnan(vecs).any() and not vecs[0].any() and np.linalg.norm(vecs[1]) == pytest.approx(1.0)


@pytest.fixture(scope="module")
def fixture_corpus(tmp_path_factory) -> sources.Built:
    return sources.build("fixture", tmp_path_factory.mktemp("cache"))


@pytest.mark.parametrize("prompts", PROMPTS)
def test_the_lab_prefixes_questions_and_every_embedded_text_as_the_card_says(prompts, fixture_corpus,
                                                                            monkeypatch) -> None:
    monkeypatch.setattr(vector_lab.sources, "build", lambda *a, **k: fixture_corpus)
    stub = StubEncoder()
    out = vector_lab.run("fixture", None, stub, prompts=prompts)
    questions = [q.question for q in fixture_corpus.questions.questions]
    assert stub.calls[0] == [prompts.query + q for q in questions]
    assert len(stub.calls) == 1 + len(vector_lab.RULES) and list(out) == list(vector_lab.RULES)
    for call in stub.calls[1:]:
        assert call and all(t.startswith(prompts.passage) for t in call)
        assert not any(t.startswith(prompts.passage + prompts.query) for t in call if prompts.query)
    for m in out.values():
        assert 0 <= m["hit@1"] <= m["hit@4"] <= m["hit@10"] <= 1 and m["texts/s"] > 0


def test_the_ranking_does_not_depend_on_vector_length(fixture_corpus, monkeypatch) -> None:
    monkeypatch.setattr(vector_lab.sources, "build", lambda *a, **k: fixture_corpus)
    plain = vector_lab.run("fixture", None, StubEncoder())
    scaled = vector_lab.run("fixture", None, StubEncoder(scale=True))
    drop = ("texts/s",)
    assert any(m["hit@10"] > 0 for m in plain.values())   # the stub ranks, so equality is not 0 == 0
    assert ({r: {k: v for k, v in m.items() if k not in drop} for r, m in plain.items()}
            == {r: {k: v for k, v in m.items() if k not in drop} for r, m in scaled.items()})


def test_the_command_line_loads_the_folder_with_its_pooling_and_prompts(fixture_corpus, monkeypatch, tmp_path,
                                                                        capsys) -> None:
    folder = tmp_path / "e5"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"\0" * 3 * 2**20)
    stub, seen = StubEncoder(), []
    monkeypatch.setattr(vector_lab.sources, "build", lambda *a, **k: fixture_corpus)
    monkeypatch.setattr(vector_lab, "load", lambda settings: (seen.append(settings), (stub, DIM))[1])
    monkeypatch.setattr(vector_lab, "model_path", lambda settings: folder)
    assert vector_lab.main(["fixture", "--model", str(folder), "--pooling", "mean", "--query-prefix", "query: ",
                            "--passage-prefix", "passage: ", "--rule", "dense baseline"]) == 0
    [settings] = seen
    assert (settings.model, settings.pooling, settings.max_tokens) == (str(folder), "mean", 256)
    assert len(stub.calls) == 2 and stub.calls[0][0].startswith("query: ")
    assert all(t.startswith("passage: ") for t in stub.calls[1])
    printed = capsys.readouterr().out
    assert "3 MiB on disk" in printed and "| dense baseline |" in printed and "| embed_text" not in printed


def test_a_fact_ranks_by_its_best_window_when_windows_are_asked(monkeypatch) -> None:
    """A long fact whose answer is one paragraph among filler loses on one vector and wins on its windows."""
    filler = "\n\n".join(" ".join(f"w{i}x{j}" for j in range(12)) for i in range(8))
    long = f"{filler}\n\nzebra quagga okapi"
    facts = [(harness.Section(uri=u, text=f"{t}\n{b}", body=b, source_path=u, title=t),
              f"---\ntitle: {t}\nbreadcrumb: [{t}]\n---\n{b}\n")
             for u, t, b in [("a.md", "Alpha", long), ("b.md", "Beta", "zebra banana cherry")]]
    q = Question(id="q", kind="buried", question="zebra quagga okapi", answer="zebra quagga okapi")
    monkeypatch.setattr(vector_lab.sources, "build", lambda *a, **k: SimpleNamespace(
        questions=SimpleNamespace(questions=[q])))
    monkeypatch.setattr(vector_lab, "rendered_facts", lambda built: facts)
    out = vector_lab.run("synthetic", None, StubEncoder(), rules=["dense baseline"], windows=[200])
    assert out["dense baseline"]["hit@1"] == 0 and out["dense baseline"]["texts"] == 2
    assert out["best window of 200 characters"]["hit@1"] == 1 and out["best window of 200 characters"]["texts"] > 2
