"""Search latency: per stage p50/p95 over real queries (warm, no rerank), and rerank of 20
candidates with MiniLM-L6-sized and bge-reranker-v2-m3-sized cross-encoders on this machine, under
torch and under onnxruntime (fp32 and int8), plus the packaged ms-marco-MiniLM-L-12-v2.

The sized models have random weights (their timings are honest, their scores are not); the
packaged one is real. Prints markdown tables.

    python -m muninn.evals.lab.bench_search pipeline --conversation 26
    python -m muninn.evals.lab.bench_search rerank --sizes packaged minilm m3 --configs onnx:256:int8
    python -m muninn.evals.lab.bench_search index --docs 10000 100000
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from muninn.core import config
from muninn.core.client import OpenViking
from muninn.core.config import RerankSettings
from muninn.core.ranking_profile import Ranking
from muninn.evals import benchutil, lab
from muninn.evals.lab import locomo
from muninn.plugins.search import keyword, query, query_dates, rerank
from muninn.plugins.search.pipeline import Searcher


def pct(values: list[float], p: float) -> float:
    """p in 0..100."""
    return benchutil.pct(values, p / 100)


def pipeline(conv_id: str, repeat: int, rerank: bool = False) -> tuple[str, dict]:
    """Per-stage timings of the hybrid route; with `rerank`, the defaults' rerank stage too."""
    settings = config.load()
    root = OpenViking.root(settings)
    account = f"bench{uuid.uuid4().hex[:8]}"
    client = OpenViking(settings.server.base_url, root.create_account(account, "owner"), key_name=account)
    conv = json.loads((locomo.DATA / f"{conv_id}.json").read_text())
    files = locomo.corpus(conv, conv_id)
    db = Path(tempfile.mkdtemp()) / "kw.sqlite"
    t0 = time.perf_counter()
    locomo.ingest(client, files, conv_id, db)
    ingest_s = time.perf_counter() - t0
    qs = [q["question"] for q in locomo.questions(conv)]
    target = f"{locomo.ROOT}/{conv_id}"
    stages: dict[str, list[float]] = {}
    totals: dict[str, list[float]] = {"hybrid": [], "vector only": [], "identifier": []}
    with Searcher(settings, client=client, index=db) as s:
        s.search(qs[0], target=target, rerank=rerank)         # warm-up: connections, first find, model load
        for _ in range(repeat):
            for q in qs:
                for name, kw in (("hybrid", {"rerank": rerank}), ("vector only", {"hybrid": False, "rerank": False})):
                    t = time.perf_counter()
                    res = s.search(q, target=target, **kw)
                    totals[name].append((time.perf_counter() - t) * 1000)
                    if name == "hybrid":
                        for stage, ms in res.timings_ms.items():
                            stages.setdefault(stage, []).append(ms)
                t = time.perf_counter()
                s.search(f"D{len(q) % 9 + 1}-{len(q)}", target=target, rerank=False)   # ticket-shaped key
                totals["identifier"].append((time.perf_counter() - t) * 1000)
    client.close()
    root.close()
    # Pipeline order; a stage that runs for some queries only (dated) says over how many.
    order = ["analyse", "vector", "keyword", "dated", "fusion", "content", "linear", "rerank", "recency", "cap"]
    named = sorted(stages, key=lambda k: order.index(k) if k in order else len(order))
    rows = ["| stage | searches | p50 ms | p95 ms |", "|---|---|---|---|"]
    rows += [f"| {k} | {len(stages[k])} | {pct(stages[k], 50):.1f} | {pct(stages[k], 95):.1f} |" for k in named]
    rows += [f"| **total, {k}** | {len(v)} | {pct(v, 50):.1f} | {pct(v, 95):.1f} |" for k, v in totals.items()]
    head = (f"conversation {conv_id}: {len(files)} files ingested + indexed in {ingest_s:.1f} s; "
            f"{len(qs)} questions x {repeat}, warm, rerank {'on (hybrid)' if rerank else 'off'}\n\n")
    return head + "\n".join(rows), {"stages": stages, "totals": totals}


def rerank_bench(sizes: list[str], configs: list[str], runs: int, threads: int) -> str:
    """`configs` are `backend:max_length[:int8]`, e.g. `flag:512`, `cross-encoder:256:int8`."""
    import torch

    sys.path.insert(0, str(lab.REPO / "tests"))
    import rerank_model

    torch.set_num_threads(threads)
    conv = json.loads((locomo.DATA / "26.json").read_text())
    texts = list(locomo.corpus(conv, "26").values())
    # ~1,500 characters each, like the pipeline's content stage
    docs = [(t * 4)[:1500] for t in texts[:20]]
    rows = ["| model shape | backend | max_length | int8 | p50 s | p95 s | cached call ms |",
            "|---|---|---|---|---|---|---|"]
    for size in sizes:
        packaged = size == "packaged"      # the real ms-marco-MiniLM-L-12-v2, int8 ONNX from its wheel
        folder = None if packaged else rerank_model.build(Path(tempfile.mkdtemp()) / size, size=size)
        onnx: dict[bool, Path] = {}
        for spec in configs:
            backend, length, *flag = spec.split(":")
            int8 = flag == ["int8"]
            if packaged and not (backend == "onnx" and int8):
                continue
            if packaged:
                where = "cross-encoder/ms-marco-MiniLM-L-12-v2"
            elif backend == "onnx":
                if int8 not in onnx:
                    onnx[int8] = rerank_model.to_onnx(folder, Path(tempfile.mkdtemp()) / "onnx", int8=int8)
                where = str(onnx[int8])
            else:
                where = str(folder)
            rerank._LOADED.clear()
            model = rerank.load(RerankSettings(model=where, fallbacks=[], backend=backend, threads=threads,
                                               int8=int8 and backend != "onnx"), Ranking(max_length=int(length)))
            model.inner.rerank("warm up", docs[:2])
            times = []
            for i in range(runs):
                t = time.perf_counter()
                model.rerank(f"question number {i} about the conversation", docs)
                times.append(time.perf_counter() - t)
            t = time.perf_counter()
            model.rerank("question number 0 about the conversation", docs)   # served by the score cache
            cached = (time.perf_counter() - t) * 1000
            rows.append(f"| {size} | {backend} | {length} | {'yes' if int8 else 'no'} | "
                        f"{statistics.median(times):.2f} | {pct(times, 95):.2f} | {cached:.2f} |")
            print(rows[-1], file=sys.stderr, flush=True)
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"]
    return (f"20 candidates x ~1,500 chars, torch threads {threads}, {runs} runs each, random weights, "
            f"load average at the end {' '.join(load)}\n\n" + "\n".join(rows))


def index_bench(sizes: list[int], runs: int) -> str:
    """The keyword index at scale, at its worst: two names head every title (like the two speakers
    of a conversation), so the query's name matches half the index. Times building the index, the
    BM25 top 20, BM25 of 40 given candidates (linear fusion), the header share of the query's
    words (which of them are facets, for the header match; the pipeline counts under its target) and
    the dated list (BM25 top 20 among the files of one named day, files spread over three years)."""
    import random

    rng = random.Random(7)
    words = [f"w{i}" for i in range(5000)]
    text = "what did Alice say about the w1 and w2 rollout"
    terms = query.analyse(text).terms
    match = query.fts_query(query.analyse(text))
    day = query_dates.Window(dt.date(2024, 6, 3), dt.date(2024, 6, 3)).bounds(1)
    rows = ["| files | build the index s | BM25 top 20 p50 ms | BM25 of 40 candidates p50 ms | "
            "header share, whole index p50 ms | header share under the target p50 ms | "
            "dated top 20, one day p50 ms |", "|---|---|---|---|---|---|---|"]
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "kw.sqlite"
            start = dt.date(2023, 1, 1)
            files = {f"viking://resources/b/{i}.md": f"---\ndate: {start + dt.timedelta(days=i % 1095)}\n---\n"
                     f"{rng.choice(['Alice', 'Bob'])} said, on day {i % 365}:\n"
                     + " ".join(rng.choices(words, k=40)) for i in range(n)}
            t0 = time.perf_counter()
            keyword.index_facts(db, files)
            build = time.perf_counter() - t0
            idx = keyword.KeywordIndex(db)
            uris = rng.sample(list(files), 40)
            cells = []
            for op, args in ((idx.candidates, (match, "viking://resources", 20)), (idx.scores, (match, uris)),
                             (idx.header_share, (terms,)), (idx.header_share, (terms, "viking://resources")),
                             (idx.candidates, (match, "viking://resources", 20, day))):
                times = []
                for _ in range(runs):
                    t0 = time.perf_counter()
                    op(*args)
                    times.append((time.perf_counter() - t0) * 1000)
                cells.append(f"{statistics.median(times):.2f}")
            idx.close()
        rows.append(f"| {n:,} | {build:.2f} | {' | '.join(cells)} |")
        print(rows[-1], file=sys.stderr, flush=True)
    return f"query {text!r}, {runs} runs each\n\n" + "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="part", required=True)
    p = sub.add_parser("pipeline")
    p.add_argument("--conversation", default="26")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--json", type=Path)
    p.add_argument("--rerank", action="store_true", help="hybrid searches rerank as the defaults do")
    r = sub.add_parser("rerank")
    r.add_argument("--sizes", nargs="+", default=["packaged", "minilm", "m3"],
                   help="packaged: the real ms-marco-MiniLM-L-12-v2 (int8 ONNX); minilm, m3: random weights")
    r.add_argument("--configs", nargs="+", default=["flag:512", "flag:256", "flag:128", "flag:256:int8",
                                                     "cross-encoder:256"])
    r.add_argument("--runs", type=int, default=5)
    r.add_argument("--threads", type=int, default=2)
    h = sub.add_parser("index", help="the keyword index at 10,000 and 100,000 files (no server)")
    h.add_argument("--docs", nargs="+", type=int, default=[10_000, 100_000])
    h.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    if args.part == "index":
        text = index_bench(args.docs, args.runs)
    elif args.part == "pipeline":
        text, raw = pipeline(args.conversation, args.repeat, args.rerank)
        if args.json:
            args.json.write_text(json.dumps(raw))
    else:
        text = rerank_bench(args.sizes, args.configs, args.runs, args.threads)
    print(text)


if __name__ == "__main__":
    main()
