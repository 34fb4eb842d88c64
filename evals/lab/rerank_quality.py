"""What each warm rerank lever (rerank_speed.LEVERS) costs in ranking quality, on the corpora traces.

    python -m muninn.evals.lab.rerank_quality TRACE_DIR --exports WORK_DIR [--scores cache.json]

A score-changing lever (batching, truncation) re-scores each question's first 20 fused candidates with
the lever's cross-encoder; a lever that only reads fewer candidates (candidates, gap, skip_margin) keeps
the recorded scores. Either way the question is then ranked by replay.py, the product's own fusion,
blend, recency and cap code, and scored against the gold: hit@1/4/10 and MRR per corpus, next to the
current settings, with how many questions keep the current top 4 (in order).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from muninn.core.config import SearchSettings
from muninn.evals.lab.corpora import replay
from muninn.evals.lab.rerank_speed import CURRENT, HEAD, LEVERS, Lever, Question, backend, questions

# Fewer candidates read, ranked offline: (label, Setting changes).
READ_LESS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("candidates 12", {"candidates": 12}),
    ("candidates 10", {"candidates": 10}),
    ("gap 2.0 (only those within 2 z of the best)", {"gap": 2.0}),
    ("gap 1.0", {"gap": 1.0}),
    ("skip_margin 3.0 (no cross-encoder when fusion leads by 3 z)", {"skip_margin": 3.0}),
    ("skip_margin 1.5", {"skip_margin": 1.5}),
)
SCORED = tuple(lv for lv in LEVERS if lv.scores_change and (lv == CURRENT or lv.settings.keys() & {
    "batch_size", "length_sort", "max_length"}) and lv.settings.get("batch_size") != 20)


def rescored(qs: list[Question], lever: Lever, cache: dict[str, list[float]]) -> list[dict[str, Any]]:
    """Each question's record with the lever's scores on its first HEAD candidates."""
    model = None
    out = []
    for q in qs:
        key = f"{q.corpus}/{q.record['id']}/{lever.label}"
        if key not in cache:
            model = model or backend(lever)
            cache[key] = model.rerank(q.text, q.docs)
        cands = [{**c, "ce": s} for c, s in zip(q.record["cands"], cache[key], strict=False)]
        out.append({**q.record, "cands": cands + q.record["cands"][HEAD:]})
    return out


def agreement(recs: list[dict[str, Any]], base: list[dict[str, Any]], s: replay.Setting,
              cfg: SearchSettings) -> int:
    scfg = s.cfg(cfg)
    return sum(replay.rank(a, s, scfg)[:4] == replay.rank(b, replay.Setting.of(cfg), cfg)[:4]
               for a, b in zip(recs, base, strict=True))


def pairs_read(recs: list[dict[str, Any]], s: replay.Setting, cfg: SearchSettings) -> float:
    """Mean pairs the cross-encoder reads per question under `s` (0 where fusion's margin skips it)."""
    from muninn.plugins.search.ranking import rerank_head
    from muninn.plugins.search.types import Candidate

    scfg = s.cfg(cfg)
    r_ = replay.profile(scfg)
    split = [rerank_head([Candidate(uri=c["uri"], score=c["score"]) for c in r["cands"]], r_, scfg.rerank.candidates)
             for r in recs]
    return sum(len(x[0]) if x else 0 for x in split) / max(len(recs), 1)


Row = tuple[str, str, dict[str, float], int, int, float, float]


def rows(qs: list[Question], cache: dict[str, list[float]], scored: tuple[Lever, ...] = SCORED) -> list[Row]:
    """(corpus, lever, metrics, questions keeping the current top 4, questions, max |score change|,
    mean pairs read)."""
    cfg = SearchSettings()
    current = replay.Setting.of(cfg)
    out = []
    for corpus in dict.fromkeys(q.corpus for q in qs):
        mine = [q for q in qs if q.corpus == corpus]
        base = [q.record for q in mine]
        full = pairs_read(base, current, cfg)
        out.append((corpus, "recorded scores (current)", replay.scores(base, current, cfg), len(mine), len(mine), 0.0,
                    full))
        for lv in scored:
            recs = rescored(mine, lv, cache)
            moved = max(abs(a["ce"] - b["ce"]) for r, q in zip(recs, mine, strict=True)
                        for a, b in zip(r["cands"][:HEAD], q.record["cands"][:HEAD], strict=False))
            out.append((corpus, f"re-scored: {lv.label}", replay.scores(recs, current, cfg),
                        agreement(recs, base, current, cfg), len(mine), moved, full))
        for label, change in READ_LESS:
            s = replace(current, **change)
            out.append((corpus, label, replay.scores(base, s, cfg), agreement(base, base, s, cfg), len(mine), 0.0,
                        pairs_read(base, s, cfg)))
    return out


def markdown(result: list[Row]) -> str:
    lines = ["| corpus | lever | hit@1 | hit@4 | hit@10 | MRR | same top 4 as current | max score change | "
             "pairs read |", "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for corpus, label, m, same, n, moved, read in result:
        lines.append(f"| {corpus} | {label} | {m['hit@1']:.3f} | {m['hit@4']:.3f} | {m['hit@10']:.3f} | "
                     f"{m['MRR']:.3f} | {same}/{n} | {moved:.1e} | {read:.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m muninn.evals.lab.rerank_quality", description=__doc__.splitlines()[0])
    ap.add_argument("traces", type=Path, help="a folder of CORPUS.jsonl written by `corpora run --trace`")
    ap.add_argument("--exports", type=Path, required=True, help="the harness's work folder (its --cache/work)")
    ap.add_argument("--scores", type=Path, help="a JSON file keeping each lever's scores between runs")
    ap.add_argument("--replay-only", action="store_true", help="only the levers that read fewer candidates "
                    "(no cross-encoder run)")
    args = ap.parse_args(argv)
    cache = json.loads(args.scores.read_text()) if args.scores and args.scores.exists() else {}
    qs = questions(args.traces, args.exports, read=not args.replay_only)
    t0, load0 = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.getloadavg()[0]
    try:
        result = rows(qs, cache, () if args.replay_only else SCORED)
    finally:
        if args.scores:
            args.scores.write_text(json.dumps(cache))
    print(f"{t0}, {len(qs)} questions, load average {load0:.1f} -> {os.getloadavg()[0]:.1f}\n")
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
