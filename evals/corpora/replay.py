"""Replay recorded questions (trace.py) under other fusion and rerank settings, and choose a setting
by leaving one corpus out: the value fitted on the other corpora is scored on the one left out.

    python -m muninn.evals.corpora.replay TRACE_DIR [--out evals/results/corpora_loco.md]

Ranking goes through the product's own code (fusion.linear, the rerank stage's `blend`,
recency.apply, cap.per_file), so a replayed setting ranks exactly as the pipeline would.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import statistics
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from muninn.core.config import SearchSettings
from muninn.plugins.search import cap, fusion, recency
from muninn.plugins.search.stages import Candidate
from muninn.plugins.search.stages.rerank import blend

K = 10


@dataclass(frozen=True)
class Setting:
    keyword_weight: float = 2.0
    vector_weight: float = 1.0
    fact_weight: float = 1.0
    header_weight: float = 1.0
    rerank: bool = True
    candidates: int = 20
    blend: float = 0.25
    recency: bool = True

    @classmethod
    def of(cls, cfg: SearchSettings) -> Setting:
        """The setting a configuration runs with."""
        return cls(keyword_weight=cfg.keyword_weight, vector_weight=cfg.vector_weight, fact_weight=cfg.fact_weight,
                   header_weight=cfg.header_weight, rerank=cfg.rerank.enabled, candidates=cfg.rerank.candidates,
                   blend=cfg.rerank.blend, recency=cfg.recency)

    def cfg(self, base: SearchSettings) -> SearchSettings:
        rr = base.rerank.model_copy(update={"blend": self.blend, "candidates": self.candidates})
        return base.model_copy(update={"keyword_weight": self.keyword_weight, "vector_weight": self.vector_weight,
                                       "fact_weight": self.fact_weight, "header_weight": self.header_weight,
                                       "rerank": rr})

    def label(self) -> str:
        rr = f"rerank {self.candidates}, blend {self.blend:g}" if self.rerank else "no rerank"
        return (f"kw {self.keyword_weight:g}, vec {self.vector_weight:g}, fact {self.fact_weight:g}, "
                f"header {self.header_weight:g}, {rr}")


def rank(rec: dict[str, Any], s: Setting, cfg: SearchSettings) -> list[str]:
    """The URIs, best first, the pipeline would return for this recorded question under `s`."""
    cands = [Candidate(uri=c["uri"], score=c["score"]) for c in rec["cands"]]
    if not cands:
        return []
    by_uri = {c["uri"]: c for c in rec["cands"]}
    feats = {name: {c["uri"]: c["features"][name] for c in rec["cands"] if name in c["features"]}
             for name in rec["features"]}
    if not cfg.header_weight:
        feats.pop("header", None)    # the product computes no header match when its weight is 0
    if rec["linear"]:
        weights = {"keyword": cfg.keyword_weight, "vector": cfg.vector_weight, "fact": cfg.fact_weight,
                   "header": cfg.header_weight, "date": cfg.date_weight}
        cands = fusion.linear(cands, feats, weights)
    if s.rerank and all(by_uri[c.uri]["ce"] is not None for c in cands):
        head, tail = cands[: s.candidates], cands[s.candidates:]
        scores = blend([c.score for c in head], [by_uri[c.uri]["ce"] for c in head], cfg,
                       {name: [vals.get(c.uri, 0.0) for c in head] for name, vals in feats.items()})
        for c, b in zip(head, scores, strict=True):
            c.score = b
        head.sort(key=lambda c: -c.score)
        floor = min(c.score for c in head)
        for i, c in enumerate(tail, start=1):
            c.score = floor - 1e-3 * i
        cands = head + tail
    if s.recency and not rec["window"]:
        dates = {u: dt.datetime.fromisoformat(c["date"]) if c["date"] else None for u, c in by_uri.items()}
        cands = recency.apply(cands, dates, cfg.half_life_days, cfg.recency_weight,
                              dt.datetime.fromisoformat(rec["now"]))
    cands = cap.per_file(cands, {u: c["file"] for u, c in by_uri.items()}, cfg.per_file)
    return [c.uri for c in cands[:K]]


def firsts(recs: list[dict[str, Any]], s: Setting, base: SearchSettings) -> list[int | None]:
    """0-based rank of each question's first right URI under `s` (None: not in the top K)."""
    cfg = s.cfg(base)
    out = []
    for rec in recs:
        uris, gold = rank(rec, s, cfg), set(rec["gold"])
        out.append(next((i for i, u in enumerate(uris) if u in gold), None))
    return out


def scores(recs: list[dict[str, Any]], s: Setting, base: SearchSettings) -> dict[str, float]:
    firsts_ = firsts(recs, s, base)
    n = max(len(firsts_), 1)
    out = {f"hit@{k}": sum(1 for f in firsts_ if f is not None and f < k) / n for k in (1, 4, 10)}
    out["MRR"] = sum(1 / (f + 1) for f in firsts_ if f is not None) / n
    return out


def objective(m: dict[str, float]) -> float:
    """What a setting is chosen on: the gate's two cut-offs and the first hit, equally."""
    return (m["hit@4"] + m["hit@10"] + m["MRR"]) / 3


def grid(base: Setting) -> list[Setting]:
    out = []
    for kw, fact, header in itertools.product((0.5, 1.0, 2.0, 3.0), (0.0, 0.5, 1.0), (0.0, 1.0)):
        fused = replace(base, keyword_weight=kw, fact_weight=fact, header_weight=header)
        out.append(replace(fused, rerank=False))
        for cands, bl in itertools.product((10, 20), (0.0, 0.25, 0.5, 1.0, 2.0)):
            out.append(replace(fused, rerank=True, candidates=cands, blend=bl))
    return out


def load(trace_dir: Path) -> dict[str, list[dict[str, Any]]]:
    return {p.stem: [json.loads(x) for x in p.read_text().splitlines() if x.strip()]
            for p in sorted(trace_dir.glob("*.jsonl"))}


def loco(corpora: dict[str, list[dict[str, Any]]], settings: list[Setting], base: SearchSettings
         ) -> tuple[dict[Setting, dict[str, dict[str, float]]], list[dict[str, Any]]]:
    table = {s: {name: scores(recs, s, base) for name, recs in corpora.items()} for s in settings}
    rows = []
    for out in corpora:
        rest = [c for c in corpora if c != out]
        best = max(settings, key=lambda s: statistics.mean(objective(table[s][c]) for c in rest))
        rows.append({"left_out": out, "chosen": best, "fit": statistics.mean(objective(table[best][c]) for c in rest),
                     "held_out": table[best][out]})
    return table, rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m muninn.evals.corpora.replay", description=__doc__.splitlines()[0])
    ap.add_argument("traces", type=Path)
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args(argv)
    corpora = load(args.traces)
    base = SearchSettings()
    current = Setting.of(base)
    settings = [current, *grid(current)]
    table, rows = loco(corpora, settings, base)
    names = list(corpora)
    print("| setting | " + " | ".join(f"{n} @4/@10" for n in names) + " | mean objective |")
    ranked = sorted(settings, key=lambda s: -statistics.mean(objective(table[s][c]) for c in names))
    for s in [current, *ranked[: args.top]]:
        cells = " | ".join(f"{table[s][n]['hit@4']:.3f}/{table[s][n]['hit@10']:.3f}" for n in names)
        print(f"| {s.label()} | {cells} | {statistics.mean(objective(table[s][c]) for c in names):.3f} |")
    print()
    for r in rows:
        h = r["held_out"]
        print(f"left out {r['left_out']}: chose [{r['chosen'].label()}] -> held-out hit@4 {h['hit@4']:.3f} "
              f"hit@10 {h['hit@10']:.3f} MRR {h['MRR']:.3f} (current: "
              f"{table[current][r['left_out']]['hit@4']:.3f}/{table[current][r['left_out']]['hit@10']:.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
