"""The warm rerank levers of issue 19, timed on one Searcher each: which one buys what latency, and how
often its top 4 still equals the default's (a cheap agreement figure; the corpora harness judges quality).

Every lever is a `search.rerank` setting that is off by default (docs/configuration.md); `muninn bench` calls
`measure` for its "Rerank levers" section.
"""

from __future__ import annotations

from typing import Any

from muninn.evals.benchutil import pct

LEVERS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("default (20 candidates, no lever)", {}),
    ("length_sort: batches of 8 of similar length", {"length_sort": True, "batch_size": 8}),
    ("gap 1.0: only candidates within 1 z of the best", {"gap": 1.0}),
    ("gap 2.0", {"gap": 2.0}),
    ("skip_margin 1.5: no cross-encoder when fusion leads by 1.5 z", {"skip_margin": 1.5}),
    ("candidates 10", {"candidates": 10}),
    ("max_length 128", {"max_length": 128}),
    ("batch_size 8: pairs padded together (the old default; a score depends on its batch)", {"batch_size": 8}),
    ("spin: true (onnxruntime's busy-waiting threads, the old default)", {"spin": True}),
)


def measure(bench: Any, rows: list[tuple[str, str]]) -> None:
    from muninn.evals.bench import queries
    from muninn.plugins.search.pipeline import Searcher

    qs = queries(bench.size.queries)
    # --quick: the three levers of issue 19 and the default; the full run adds the neighbouring settings.
    levers = [LEVERS[i] for i in (0, 1, 2, 4)] if bench.size.queries < 20 else list(LEVERS)
    baseline: dict[str, list[str]] = {}
    for label, change in levers:
        cfg = bench.settings.search.rerank.model_copy(update={"enabled": True, **change})
        settings = bench.settings.model_copy(update={"search": bench.settings.search.model_copy(
            update={"rerank": cfg})})
        with Searcher(settings, client=bench.owner, index=bench.state["index"]) as searcher:
            searcher.search("warm up the lever's model", rerank=True)
            model = searcher.reranker()
            if model is None:
                rows.append((label, f"no reranker: {searcher.rerank_problem}"))
                continue
            model._cache.clear()   # the (query, text) cache would time the previous lever's work
            stage, total, same, skipped = [], [], 0, 0
            for q in qs:
                result = searcher.search(q, rerank=True)
                stage.append(result.timings_ms.get("rerank", 0.0))
                total.append(sum(result.timings_ms.values()))
                top = [h.uri for h in result.hits]
                skipped += result.reranker is None
                if not change:
                    baseline[q] = top
                same += top == baseline.get(q)
        rows.append((label, f"rerank stage {pct(stage, 0.5):.0f} / {pct(stage, 0.95):.0f} ms, search "
                            f"{pct(total, 0.5):.0f} / {pct(total, 0.95):.0f} ms (p50 / p95); top 4 as the default "
                            f"in {same}/{len(qs)}; cross-encoder skipped in {skipped}"))
