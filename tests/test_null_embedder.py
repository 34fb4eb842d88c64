"""The null embedding endpoint of the sync floor benchmark (evals/lab/null_embedder.py): it must speak the
OpenAI embeddings protocol as OpenViking's client uses it (float and base64, `dimensions`, one text or
many) and give one text one unit vector whatever its batch. No OpenViking server: the endpoint runs in
this process on a free port, and the real OpenAI SDK talks to it."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator

import httpx
import numpy as np
import pytest
from conftest import free_port

from muninn.evals.lab.null_embedder import NullEmbedder, embeddings, vector_for

TEXTS = ["", "a", "A", "a ", "backup restore postgres", "ünïcødé › breadcrumb", "x" * 20000,
         "---\nid: tasks/1.md\ncontent_hash: 0\n---\nbody"]


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    server = NullEmbedder("127.0.0.1", free_port(), 384)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("dim", [1, 8, 384, 1024])
def test_a_vector_is_unit_length_of_its_dimension_and_fixed_by_its_text(text: str, dim: int) -> None:
    vec = vector_for(text, dim)
    assert vec.shape == (dim,) and vec.dtype == np.float32
    assert np.isclose(np.linalg.norm(vec), 1.0, atol=1e-5)
    assert np.array_equal(vec, vector_for(text, dim))


def test_different_texts_get_different_vectors() -> None:
    vecs = np.stack([vector_for(t, 384) for t in TEXTS])
    sims = vecs @ vecs.T
    off_diagonal = sims[~np.eye(len(TEXTS), dtype=bool)]
    assert np.all(np.abs(off_diagonal) < 0.3)   # random directions in 384 dimensions are nearly orthogonal


@pytest.mark.parametrize("batch", [[TEXTS[4]], [TEXTS[4], *TEXTS[:3]], [*TEXTS[:7], TEXTS[4]], [TEXTS[4]] * 5])
def test_a_text_gets_the_same_vector_in_any_batch(batch: list[str]) -> None:
    answer = embeddings({"input": batch}, 384)
    for i, text in enumerate(batch):
        assert answer["data"][i]["index"] == i
        assert np.allclose(answer["data"][i]["embedding"], vector_for(text, 384), atol=1e-7)


@pytest.mark.parametrize("dimensions", [None, 1, 64, 384])
def test_base64_and_float_carry_the_same_vector_and_dimensions_truncate_then_renormalise(dimensions) -> None:
    body = {"input": ["one", "two"], "dimensions": dimensions}
    floats = embeddings({**body, "encoding_format": "float"}, 384)["data"]
    packed = embeddings({**body, "encoding_format": "base64"}, 384)["data"]
    for f, b in zip(floats, packed, strict=True):
        decoded = np.frombuffer(base64.b64decode(b["embedding"]), dtype="<f4")
        assert np.array_equal(decoded, np.asarray(f["embedding"], dtype=np.float32))
        assert len(decoded) == (dimensions or 384) and np.isclose(np.linalg.norm(decoded), 1.0, atol=1e-5)


@pytest.mark.parametrize("body", [
    None, [], "text", {}, {"input": []}, {"input": [1, 2]}, {"input": None}, {"input": [["nested"]]},
    {"input": "a", "dimensions": 0}, {"input": "a", "dimensions": 385}, {"input": "a", "dimensions": "8"},
    {"input": "a", "dimensions": True}, {"input": "a", "encoding_format": "int8"},
    {"input": ["a"] * 2049},
])
def test_requests_openai_would_refuse_are_refused(body) -> None:
    with pytest.raises(ValueError):
        embeddings(body, 384)


def test_the_openai_sdk_reads_it_as_openviking_calls_it(endpoint: str) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=f"{endpoint}/v1", api_key="none", max_retries=0)
    one = client.embeddings.create(input=TEXTS[4], model="bge-small-en-v1.5")   # the SDK's default: base64
    assert np.allclose(one.data[0].embedding, vector_for(TEXTS[4], 384), atol=1e-7)
    several = client.embeddings.create(input=TEXTS[:4], model="m", dimensions=16, encoding_format="float")
    assert [len(d.embedding) for d in several.data] == [16] * 4
    assert several.model == "m"
    client.close()


def test_http_errors_health_and_stats(endpoint: str) -> None:
    with httpx.Client(base_url=endpoint) as http:
        before = http.get("/stats").json()
        assert http.get("/health").json()["dimensions"] == 384
        assert http.post("/v1/embeddings", content=b"{not json").status_code == 400
        assert http.post("/v1/embeddings", json={"input": []}).status_code == 400
        assert http.post("/v1/other", json={"input": "a"}).status_code == 404
        assert http.get("/nothing").status_code == 404
        assert http.post("/v1/embeddings", json={"input": ["a", "b", "c"]}).status_code == 200
        after = http.get("/stats").json()
    # Only answered requests count: the texts the server really had embedded.
    assert (after["requests"] - before["requests"], after["texts"] - before["texts"]) == (1, 3)
