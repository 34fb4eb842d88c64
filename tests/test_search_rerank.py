"""The rerank stage: a tiny random cross-encoder through the real FlagReranker and CrossEncoder
loaders, a TEI-style HTTP endpoint on 127.0.0.1, and the missing-weights warning (result + doctor)."""

from __future__ import annotations

import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
import rerank_model

from muninn.core import registry
from muninn.core.config import RerankSettings, Settings
from muninn.core.ranking_profile import NAMES
from muninn.plugins.search import doctor_check, keyword, rerank
from muninn.plugins.search.pipeline import Searcher, rerank_text
from muninn.plugins.search.types import StageError

ROOT = "viking://resources"
PAIRS = [("postgres rollback", "Restore the snapshot and repoint the app."),
         ("postgres rollback", "The office wifi password rotates monthly."),
         ("certificate", "x " * 600)]   # longer than max_length: must be truncated, not crash


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return rerank_model.build(tmp_path_factory.mktemp("tiny-reranker"))


def _direct_scores(path, pairs) -> list[float]:
    """What the model says without FlagEmbedding or sentence-transformers in between."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    out = []
    with torch.no_grad():
        for q, d in pairs:
            enc = tok(q, d, truncation="only_second", max_length=512, return_tensors="pt")
            out.append(1 / (1 + math.exp(-model(**enc).logits.item())))
    return out


@pytest.mark.parametrize("backend", ["flag", "cross-encoder"])
def test_tiny_model_through_real_loaders(tiny, backend: str) -> None:
    model = rerank.load(RerankSettings(model=str(tiny), backend=backend))
    assert model.name == f"rerank:{backend}"
    got = model.rerank(PAIRS[0][0], [d for _, d in PAIRS[:2]]) + model.rerank(PAIRS[2][0], [PAIRS[2][1]])
    assert got == pytest.approx(_direct_scores(tiny, PAIRS), abs=1e-4)


def test_hub_id_resolves_from_local_cache_only(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(rerank.RerankUnavailable, match="local Hugging Face cache"):
        rerank.resolve("BAAI/bge-reranker-v2-m3")
    with pytest.raises(rerank.RerankUnavailable, match="no config.json"):
        rerank.resolve(str(tmp_path))


def test_doctor_warns_on_missing_weights_with_the_fix(tiny, tmp_path) -> None:
    assert doctor_check.reranker_weights in registry.checks()
    missing = Settings(search={"rerank": {"model": str(tmp_path / "absent"), "fallbacks": []}})
    [check] = doctor_check.reranker_weights(missing)
    assert check.level == "warn" and "fusion order" in check.detail and "search.rerank.model" in check.fix
    [ok] = doctor_check.reranker_weights(Settings(search={"rerank": {"model": str(tiny)}}))
    assert ok.level == "ok"


# --- the stage inside the pipeline, against the real server ---

FACTS = {
    "ops/rollback.md": "---\nsource: notes\ndate: 2025-05-01\n---\n# Postgres rollback\nRestore the snapshot "
                       "and repoint the app after a failed postgres upgrade.\n",
    "ops/upgrade.md": "---\nsource: notes\ndate: 2025-05-01\n---\n# Postgres upgrade\nRun pg_upgrade with "
                      "hard links on the postgres primary.\n",
    "ops/wifi.md": "---\nsource: notes\ndate: 2025-05-01\n---\n# Office wifi\nThe wifi password rotates.\n",
    "ops/backup.md": "---\nsource: notes\ndate: 2025-05-01\n---\n# Backups\nNightly postgres backups go "
                     "to object storage.\n",
}


@pytest.fixture(scope="module")
def corpus(stack, tmp_path_factory):
    _, client = stack.new_account("rrk")
    client.ensure_dir(f"{ROOT}/ops")
    files = {f"{ROOT}/{p}": t for p, t in FACTS.items()}
    client.batch_write(f"{ROOT}/ops", files, wait=True)
    client.wait()
    db = tmp_path_factory.mktemp("kw") / "index.sqlite"
    keyword.index_facts(db, files)
    yield client, db
    client.close()


def _settings(stack, **rerank_cfg) -> Settings:
    rerank_cfg.setdefault("blend", 0.0)      # these tests check the reranker's own order
    rerank_cfg.setdefault("header_blend", 0.0)
    rerank_cfg.setdefault("min_confidence", 0.0)   # a tiny random model is never sure: reorder anyway
    s = stack.settings
    ranked = {k: rerank_cfg.pop(k) for k in list(rerank_cfg) if k in NAMES}
    return s.model_copy(update={"search": s.search.model_copy(update={
        "recency": False, "rerank": s.search.rerank.model_copy(update=rerank_cfg),
        "ranking": {**s.search.ranking, **ranked}})})


@pytest.mark.integration
@pytest.mark.parametrize("backend", ["flag", "cross-encoder"])
def test_pipeline_orders_by_tiny_reranker(stack, corpus, tiny, backend: str) -> None:
    client, db = corpus
    with Searcher(_settings(stack, model=str(tiny), backend=backend), client=client, index=db) as s:
        res = s.search("postgres rollback", k=4)
        docs = s.fetcher.fetch([h.uri for h in res.hits])
    assert res.warnings == [] and len(res.hits) == 4
    scores = [h.stage_scores["rerank"] for h in res.hits]
    assert scores == sorted(scores, reverse=True)
    direct = _direct_scores(tiny, [("postgres rollback", rerank_text(docs[h.uri], 1500)) for h in res.hits])
    assert scores == pytest.approx(direct, abs=1e-4)


class _Rerank(BaseHTTPRequestHandler):
    """A TEI-style /rerank: score = share of query words found in the text. Results come back
    shuffled (best last), as a real server may order them any way."""

    seen: ClassVar[list[dict]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(body)
        words = body["query"].lower().split()
        out = [{"index": i, "score": sum(w in t.lower() for w in words) / len(words)}
               for i, t in enumerate(body["texts"])]
        data = json.dumps(sorted(out, key=lambda r: r["score"])).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def endpoint():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Rerank)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.integration
def test_http_endpoint_reranks(stack, corpus, endpoint) -> None:
    client, db = corpus
    _Rerank.seen.clear()
    with Searcher(_settings(stack, model=f"endpoint:{endpoint}"), client=client, index=db) as s:
        res = s.search("snapshot repoint rollback", k=2)
    assert res.warnings == []
    assert res.hits[0].uri.endswith("rollback.md") and res.hits[0].stage_scores["rerank"] == 1.0
    assert len(_Rerank.seen) == 1 and _Rerank.seen[0]["query"] == "snapshot repoint rollback"


@pytest.mark.integration
@pytest.mark.parametrize("model", ["/nonexistent/reranker", "endpoint:http://127.0.0.1:9"])
def test_missing_reranker_falls_back_with_a_warning(stack, corpus, model: str) -> None:
    client, db = corpus
    with Searcher(_settings(stack, model=model, fallbacks=[]), client=client, index=db) as s:
        res = s.search("postgres rollback", k=3)
        plain = s.search("postgres rollback", k=3, rerank=False)
    assert len(res.hits) == 3 and all("rerank" not in h.stage_scores for h in res.hits)
    assert res.reranker is None
    assert any(w.startswith("rerank skipped, results are in fusion order") for w in res.warnings)
    assert [h.uri for h in res.hits] == [h.uri for h in plain.hits] and plain.warnings == []


class _Short:
    name = "short"

    def rerank(self, query, docs):
        return [1.0] * (len(docs) - 1)


@pytest.mark.integration
def test_broken_reranker_fails_loudly(stack, corpus) -> None:
    client, db = corpus
    with (Searcher(_settings(stack), client=client, index=db, reranker=_Short()) as s,
          pytest.raises(StageError, match="scores for")):
        s.search("postgres rollback")


def test_onnx_backend_gives_the_plain_forward_pass_scores(tiny, tmp_path) -> None:
    folder = rerank_model.to_onnx(tiny, tmp_path / "onnx", int8=False)
    model = rerank.load(RerankSettings(model=str(folder), fallbacks=[]))
    assert model.name == "rerank:onnx"
    got = model.rerank(PAIRS[0][0], [d for _, d in PAIRS[:2]]) + model.rerank(PAIRS[2][0], [PAIRS[2][1]])
    assert got == pytest.approx(_direct_scores(tiny, PAIRS), abs=1e-4)
    with pytest.raises(rerank.RerankUnavailable, match="no model.onnx"):
        rerank.load(RerankSettings(model=str(tiny), backend="onnx", fallbacks=[]))
