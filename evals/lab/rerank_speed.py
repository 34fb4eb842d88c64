"""Warm rerank latency levers (issue 19), timed on the candidates the corpora harness recorded.

    python -m muninn.evals.lab.rerank_speed TRACE_DIR --exports WORK_DIR [--per-corpus 4] [--rounds 2]

Each question of a trace (evals/lab/corpora/trace.py) brings its query and its first 20 fused candidates;
their text is what the rerank stage reads (`rerank_text`) of the fact files the harness exported
(WORK_DIR/<corpus>/exports). Every lever is its own loaded cross-encoder (no score cache), and all of
them score the same question one after the other, in a rotating order, so load on the machine falls on
every lever alike. Prints medians, p95 and the ratio to the current settings, with the load average.
rerank_quality.py measures what the score-changing levers do to ranking on the same traces.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from muninn.core.config import RerankSettings
from muninn.core.ranking_profile import NAMES, Ranking
from muninn.evals.benchutil import pct
from muninn.evals.lab.corpora.trace import export_path
from muninn.plugins.search import doc as docmod
from muninn.plugins.search import rerank
from muninn.plugins.search.query import analyse
from muninn.plugins.search.stages.rerank_stage import rerank_text

CONTENT_CHARS = 1500      # search.content_chars' default: what the stage reads of each candidate
PASSAGE_WINDOW = Ranking().passage_window
HEAD = 20                 # rerank.candidates' default


@dataclass(frozen=True)
class Lever:
    label: str
    settings: dict[str, Any] = field(default_factory=dict)   # RerankSettings fields
    candidates: int = HEAD
    fp32: bool = False             # the packaged int8 weights dequantised: no per-batch activation scale
    scores_change: bool = True     # False: the lever only reads fewer candidates (replayed, not re-scored)


CURRENT = Lever("current (int8, each pair alone, 256 tokens, no spinning)")
LEVERS: tuple[Lever, ...] = (
    CURRENT,
    Lever("spin: true (onnxruntime's default, muninn's before)", {"spin": True}, scores_change=False),
    Lever("batch_size 8 (muninn's before): pairs padded to the batch's longest", {"batch_size": 8}),
    Lever("batch_size 20: one pass", {"batch_size": 20}),
    Lever("length_sort (batches of 8 of similar length)", {"length_sort": True, "batch_size": 8}),
    Lever("threads 1", {"threads": 1}, scores_change=False),
    Lever("fp32 (dequantised packaged weights)", fp32=True),
    Lever("max_length 192", {"max_length": 192}),
    Lever("max_length 128", {"max_length": 128}),
    Lever("candidates 12", candidates=12, scores_change=False),
    Lever("candidates 10", candidates=10, scores_change=False),
)


def backend(lever: Lever) -> rerank.OnnxBackend:
    """The packaged cross-encoder under this lever's settings, loaded the way the product loads it."""
    knobs = {k: v for k, v in lever.settings.items() if k != "spin"}
    cfg = RerankSettings(**{k: v for k, v in knobs.items() if k not in NAMES})
    r = Ranking(**{k: v for k, v in knobs.items() if k in NAMES})
    path = rerank.packaged_path(cfg.fallbacks[0])
    if path is None:
        raise SystemExit("the packaged cross-encoder is missing: install muninn's ml extra")
    model = rerank.OnnxBackend(str(path), r.max_length, r.batch_size, cfg.threads, r.length_sort,
                               bool(lever.settings.get("spin")))
    if lever.fp32:
        import onnxruntime as ort

        from muninn.evals.lab.onnx_dequantize import dequantized

        # The product's session options, on the dequantised graph.
        model.session = ort.InferenceSession(dequantized(path / "model.onnx"), model.session.get_session_options(),
                                             providers=["CPUExecutionProvider"])
    return model


@dataclass
class Question:
    corpus: str
    text: str
    docs: list[str]          # what the reranker reads of the first HEAD fused candidates, in fusion order
    record: dict[str, Any]


def texts(exports: Path, uris: Sequence[str], question: str = "") -> list[str]:
    """What the rerank stage reads of each candidate for this question (from its best paragraph)."""
    terms = analyse(question).terms
    return [rerank_text(docmod.parse(u, export_path(exports, u).read_text(encoding="utf-8")), CONTENT_CHARS, terms,
                        PASSAGE_WINDOW) for u in uris]


def questions(trace_dir: Path, work: Path, per_corpus: int | None = None, read: bool = True) -> list[Question]:
    """The questions of every trace, `per_corpus` of them spread evenly over each corpus; `read`: with
    their candidates' text. `work` is the harness's cache/work folder; its questions come from the
    harness's own sources (a built corpus is reused from the cache)."""
    from muninn.evals.lab.corpora import replay, sources

    out = []
    for corpus, recs in replay.load(trace_dir, drop=0.2).items():
        asked: dict[str, str] = {}
        if read:
            asked = {q.id: q.question for q in sources.build(corpus, work.parent).questions.questions}
        if per_corpus:
            recs = recs[:: max(1, len(recs) // per_corpus)][:per_corpus]
        for r in recs:
            docs = texts(work / corpus / "exports", [c["uri"] for c in r["cands"][:HEAD]],
                         asked.get(r["id"], "")) if read else []
            out.append(Question(corpus, asked.get(r["id"], ""), docs, r))
    return out


def timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def measure(qs: list[Question], levers: Sequence[Lever], rounds: int) -> dict[str, list[float]]:
    models = {lv.label: backend(lv) for lv in levers}
    for lv in levers:                                     # first call pays onnxruntime's lazy set-up
        models[lv.label].rerank(qs[0].text, qs[0].docs[: lv.candidates])
    ms: dict[str, list[float]] = {lv.label: [] for lv in levers}
    for r in range(rounds):
        for i, q in enumerate(qs):
            shift = (i + r) % len(levers)
            for lv in [*levers[shift:], *levers[:shift]]:
                ms[lv.label].append(timed(lambda lv=lv, q=q: models[lv.label].rerank(q.text, q.docs[: lv.candidates])))
    return ms


def table(ms: dict[str, list[float]], current: str) -> str:
    base = ms[current]
    lines = ["| lever | p50 ms | p95 ms | p50 / current | median of per-call ratios |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for label, xs in ms.items():
        paired = statistics.median(x / b for x, b in zip(xs, base, strict=True))
        lines.append(f"| {label} | {pct(xs, 0.5):.0f} | {pct(xs, 0.95):.0f} | "
                     f"{pct(xs, 0.5) / pct(base, 0.5):.2f} | {paired:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m muninn.evals.lab.rerank_speed", description=__doc__.splitlines()[0])
    ap.add_argument("traces", type=Path, help="a folder of CORPUS.jsonl written by `corpora run --trace`")
    ap.add_argument("--exports", type=Path, required=True, help="the harness's work folder (its --cache/work)")
    ap.add_argument("--per-corpus", type=int, default=4, help="questions timed per corpus")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--levers", nargs="*", type=int, help="indices into LEVERS (default: all)")
    args = ap.parse_args(argv)
    levers = [LEVERS[i] for i in args.levers] if args.levers else list(LEVERS)
    if CURRENT not in levers:
        levers.insert(0, CURRENT)
    qs = [q for q in questions(args.traces, args.exports, args.per_corpus) if q.docs]
    load0, t0 = os.getloadavg(), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    ms = measure(qs, levers, args.rounds)
    load1 = os.getloadavg()
    print(f"{t0}, {os.cpu_count()} cores, {len(qs)} questions x {args.rounds} rounds "
          f"({', '.join(sorted({q.corpus for q in qs}))}), 1-minute load average {load0[0]:.1f} -> {load1[0]:.1f}\n")
    print(table(ms, CURRENT.label))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
