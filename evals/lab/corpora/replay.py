"""Replay recorded questions (trace.py) under other fusion and rerank settings, and choose a setting
by leaving one corpus out: the value fitted on the other corpora is scored on the one left out.

    python -m muninn.evals.lab.corpora.replay TRACE_DIR [--out evals/results/corpora_loco.md]

Ranking goes through the product's own code (plugins/search/ranking.py: linear, `blend`,
recency.apply, cap.per_file), so a replayed setting ranks exactly as the pipeline would.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import statistics
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from muninn.core import registry
from muninn.core.config import SearchSettings
from muninn.core.ranking_profile import Ranking
from muninn.evals.lab.corpora import harness
from muninn.evals.lab.corpora.harness import CorpusRun
from muninn.plugins.search import ranking as order
from muninn.plugins.search.types import Candidate

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
    rerank_keyword_route: bool = True       # False: identifier queries keep BM25's order
    min_confidence: float = 0.0             # keep fusion's order when the best rerank probability is below
    gap: float = 0.0                        # latency levers (stages/rerank_stage.py read_by_reranker)
    skip_margin: float = 0.0
    vector_top: int = 40                    # each retriever's list, cut to this (a trace recorded longer)
    keyword_top: int = 20
    extra: tuple[tuple[str, float], ...] = ()   # weights of features a lab adds (lever_lab.py)
    unsure: tuple[tuple[str, float], ...] = ()  # rerank.unsure_weights: fusion again, the reranker unsure
    alternate: str | None = None                # lab only: fusion in turn with a feature's order there
    per_file: int = 2                           # search.per_file

    @classmethod
    def of(cls, cfg: SearchSettings, ranking: Ranking | None = None) -> Setting:
        """The setting a configuration runs with (`ranking`: the profile in use, else `cfg`'s overrides)."""
        r = ranking or profile(cfg)
        return cls(keyword_weight=r.keyword_weight, vector_weight=r.vector_weight, fact_weight=r.fact_weight,
                   header_weight=r.header_weight, rerank=cfg.rerank.enabled, candidates=cfg.rerank.candidates,
                   blend=r.blend, recency=cfg.recency, rerank_keyword_route=cfg.rerank.identifiers,
                   min_confidence=r.min_confidence, gap=r.gap,
                   skip_margin=r.skip_margin, vector_top=cfg.vector_top, keyword_top=cfg.keyword_top,
                   unsure=tuple(sorted(r.unsure_weights.items())), per_file=cfg.per_file)

    def cfg(self, base: SearchSettings) -> SearchSettings:
        rr = base.rerank.model_copy(update={"candidates": self.candidates, "identifiers": self.rerank_keyword_route})
        ranking = {**base.ranking, "blend": self.blend, "min_confidence": self.min_confidence, "gap": self.gap,
                   "skip_margin": self.skip_margin, "unsure_weights": dict(self.unsure),
                   "keyword_weight": self.keyword_weight, "vector_weight": self.vector_weight,
                   "fact_weight": self.fact_weight, "header_weight": self.header_weight}
        return base.model_copy(update={"vector_top": self.vector_top, "keyword_top": self.keyword_top,
                                       "per_file": self.per_file, "rerank": rr, "ranking": ranking})

    def label(self) -> str:
        rr = f"rerank {self.candidates}, blend {self.blend:g}" if self.rerank else "no rerank"
        if self.rerank and not self.rerank_keyword_route:
            rr += ", not on identifiers"
        if self.rerank and self.min_confidence:
            rr += f", fusion order below {self.min_confidence:g}"
        if self.rerank and self.min_confidence and self.unsure:
            rr += " (there " + ", ".join(f"{n} {w:g}" for n, w in self.unsure) + ")"
        if self.rerank and self.min_confidence and self.alternate:
            rr += f" (there in turn with {self.alternate})"
        if self.rerank and self.gap:
            rr += f", gap {self.gap:g}"
        if self.rerank and self.skip_margin:
            rr += f", skip at margin {self.skip_margin:g}"
        if self.per_file != Setting.per_file:
            rr += f", {self.per_file} a file"
        if (self.vector_top, self.keyword_top) != (Setting.vector_top, Setting.keyword_top):
            rr += f", lists {self.vector_top}/{self.keyword_top}"
        extra = "".join(f", {n} {w:g}" for n, w in self.extra)
        return (f"kw {self.keyword_weight:g}, vec {self.vector_weight:g}, fact {self.fact_weight:g}, "
                f"header {self.header_weight:g}{extra}, {rr}")


def profile(cfg: SearchSettings) -> Ranking:
    """The ranking `cfg` runs with: the default profile under its `search.ranking` overrides (Setting.cfg
    writes every weight the lab varies there)."""
    return Ranking(**cfg.ranking)


def fusion_weights(cfg: SearchSettings, s: Setting) -> dict[str, float]:
    """Each fusion feature's weight as the product's features read it from `cfg`, then the lab's own."""
    r = profile(cfg)
    return {**{f.name: f.weight(r) for f in registry.features()}, **dict(s.extra)}


def rank(rec: dict[str, Any], s: Setting, cfg: SearchSettings) -> list[str]:
    """The URIs, best first, the pipeline would return for this recorded question under `s`."""
    return ranked(rec, s, cfg)[0]


def ranked(rec: dict[str, Any], s: Setting, cfg: SearchSettings) -> tuple[list[str], list[str]]:
    """(the URIs the pipeline would return, best first; the URIs its cross-encoder read, whose scores the
    hits carry)."""
    kept = [c for c in rec["cands"] if within(c, {"vector": cfg.vector_top, "keyword": cfg.keyword_top})]
    rec = {**rec, "cands": kept}
    cands = [Candidate(uri=c["uri"], score=c["score"]) for c in rec["cands"]]
    if not cands:
        return [], []
    by_uri = {c["uri"]: c for c in rec["cands"]}
    feats = {name: {c["uri"]: c["features"][name] for c in rec["cands"] if name in c["features"]}
             for name in rec["features"]}
    r = profile(cfg)
    if not r.header_weight:
        feats.pop("header", None)    # the product computes no header match when its weight is 0
    if rec["linear"]:
        weights = fusion_weights(cfg, s)
        first = cands
        cands = order.linear(cands, feats, weights)
    reranks = s.rerank and (s.rerank_keyword_route or rec["route"] != "keyword")
    split = order.rerank_head(cands, r, cfg.rerank.candidates) if reranks else None
    unsure = split is not None and max(by_uri[c.uri]["ce"] or 0.0 for c in split[0]) < s.min_confidence
    read = [c.uri for c in split[0]] if split is not None else []
    if unsure and s.unsure and rec["linear"]:
        cands = order.linear(first, feats, {**weights, **dict(s.unsure)})
    if unsure and s.alternate and rec["linear"] and (values := feats.get(s.alternate)):
        cands = alternate(cands[:len(split[0])], cands[len(split[0]):], values)
    if split is not None and not unsure and all(by_uri[c.uri]["ce"] is not None for c in cands):
        head, tail = split
        scores = order.blend([c.score for c in head], [by_uri[c.uri]["ce"] for c in head], r,
                             {name: [vals.get(c.uri, 0.0) for c in head] for name, vals in feats.items()},
                             {f.name: f.blend(r) for f in registry.features()})
        cands = order.reorder(head, tail, scores)
    if s.recency and not rec["window"]:
        dates = {u: dt.datetime.fromisoformat(c["date"]) if c["date"] else None for u, c in by_uri.items()}
        cands = order.with_recency(cands, dates, r.half_life_days, r.recency_weight,
                                   dt.datetime.fromisoformat(rec["now"]))
    cands = order.per_file(cands, {u: c["file"] for u, c in by_uri.items()}, cfg.per_file, window=cfg.k)
    return [c.uri for c in cands[:K]], read


def alternate(head: list[Candidate], tail: list[Candidate], values: dict[str, float]) -> list[Candidate]:
    """Lab only (evals/results/unsure.md): the head taken in turn from its own order and from `values`'
    (a feature's, best first); each place keeps the head's score of that place."""
    by_value = sorted((c for c in head if c.uri in values), key=lambda c: -values[c.uri])
    sources, placed, out = [iter(head), iter(by_value)], set(), []
    while len(out) < len(head):
        pick = next((c for c in sources[len(out) % 2] if c.uri not in placed), None)
        if pick is None:             # one order ran out: the other fills the rest
            pick = next(c for c in sources[(len(out) + 1) % 2] if c.uri not in placed)
        placed.add(pick.uri)
        out.append(pick)
    for c, score in zip(out, sorted((c.score for c in head), reverse=True), strict=True):
        c.score = score
    return out + tail


def within(cand: dict[str, Any], tops: dict[str, int]) -> bool:
    """Whether a recorded candidate is in some retriever's list cut to `tops`. A trace recorded before
    the lists were kept has no ranks: every candidate stays, as recorded."""
    lists = cand.get("lists")
    return lists is None or any(at < tops.get(name, at + 1) for name, at in lists.items())


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
        for bl, unsure in itertools.product((0.0, 0.25, 0.5, 1.0, 2.0), (0.0, 0.05, 0.1, 0.2, 0.3)):
            out.append(replace(fused, rerank=True, blend=bl, min_confidence=unsure))
    return out


def unsure_grid(current: Setting) -> list[Setting]:
    """The second model's weight in fusion, by fusion's weights where the cross-encoder is unsure
    (rerank.unsure_weights): BM25 down or out there, the second model up (evals/results/unsure.md)."""
    out = []
    for second, there in itertools.product((0.0, 0.5, 1.5), ((), (("keyword", 0.0),), (("keyword", 0.5),),
                                                             (("keyword", 0.0), ("second", 1.5)),
                                                             (("keyword", 0.0), ("second", 3.0)),
                                                             (("keyword", 0.5), ("second", 1.5)))):
        out.append(replace(current, extra=(("second", second),), unsure=there))
    return out


def alternate_grid(current: Setting) -> list[Setting]:
    """Where the cross-encoder is unsure (rerank.min_confidence), fusion's order taken in turn with one
    feature's (a lab lever), at the shipped threshold and two higher ones; and the cap of hits a file."""
    out = [replace(current, alternate=None, min_confidence=m) for m in (0.05, 0.1)]
    for feature, m in itertools.product(("second", "vector", "fact", "keyword"), (current.min_confidence, 0.05, 0.1)):
        out.append(replace(current, alternate=feature, min_confidence=m))
    for feature, per_file in itertools.product((None, "second"), (3, 4)):    # the cap of hits a file
        out.append(replace(current, alternate=feature, per_file=per_file))
    return [s for s in dict.fromkeys(out) if s != current]


def varied(current: Setting, only: str) -> list[Setting]:
    """`FIELD=V1,V2,...`: the current setting, then it with FIELD at each value, read as FIELD's type."""
    field_, _, values = only.partition("=")
    kind = type(getattr(current, field_))
    options = [replace(current, **{field_: kind(v) if kind is not bool else v == "true"}) for v in values.split(",")]
    return [current, *[o for o in dict.fromkeys(options) if o != current]]


REPLAYED = "replayed from the trace by evals/lab/corpora/replay.py (the same ranks as the live pipeline, "\
    "tests/test_eval_corpora.py), so no latency"


def into_runs(runs: list[CorpusRun], corpora: dict[str, list[dict[str, Any]]], named: dict[str, Setting],
              base: SearchSettings) -> None:
    """Add each named setting as a variant of the run of the same corpus, ranks and kinds included."""
    for r in runs:
        recs = corpora.get(r.name)
        if not recs:
            continue
        added = []
        for name, s in named.items():
            got = firsts(recs, s, base)
            if name in r.variants:      # it ran live: the replay must agree with it, rank for rank
                live = [x["first"] for x in r.ranks if x["variant"] == name]
                if live != got:
                    raise SystemExit(f"{r.name}: the replay of {name} differs from its live run; the trace is stale")
                continue
            added.append(name)
            r.variants[name] = {**harness.metrics(got, []), "p50_ms": 0.0}
            kinds: dict[str, list[int | None]] = {}
            for rec, f in zip(recs, got, strict=True):
                kinds.setdefault(rec["kind"], []).append(f)
            r.by_kind[name] = {k: round(harness.metrics(v, [])["hit@4"], 3) for k, v in sorted(kinds.items())}
            r.ranks += [{"variant": name, "id": rec["id"], "kind": rec["kind"], "first": f}
                        for rec, f in zip(recs, got, strict=True)]
        if not added:
            continue
        r.warnings = [w for w in r.warnings if REPLAYED not in w] + [f"{', '.join(added)}: {REPLAYED}"]


class DegradedTrace(SystemExit):
    """Some recorded questions ran on a fallback path: tuning on them would fit the fallback."""


def load(trace_dir: Path, drop: float = 0.0) -> dict[str, list[dict[str, Any]]]:
    """Every CORPUS.jsonl. Questions that fell back are refused, or left out when they are at most
    `drop` (a share) of their corpus; what was left out is said on stderr."""
    out = {p.stem: [json.loads(x) for x in p.read_text().splitlines() if x.strip()]
           for p in sorted(trace_dir.glob("*.jsonl"))}
    for name, recs in out.items():
        if bad := [r for r in recs if r.get("degraded") or r.get("warnings")]:
            if len(bad) > drop * len(recs):
                raise DegradedTrace(f"{name}: {len(bad)} of {len(recs)} recorded questions fell back "
                                    f"({bad[0]['warnings'][0][:160]}); record the trace again on a quieter "
                                    "machine")
            out[name] = [r for r in recs if r not in bad]
            print(f"{name}: left out {len(bad)} of {len(recs)} questions that fell back "
                  f"({', '.join(r['id'] for r in bad)})", file=sys.stderr)
    return out


def loco(corpora: dict[str, list[dict[str, Any]]], settings: list[Setting], base: SearchSettings
         ) -> tuple[dict[Setting, dict[str, dict[str, float]]], list[dict[str, Any]]]:
    table = {s: {name: scores(recs, s, base) for name, recs in corpora.items()} for s in settings}
    rows = []
    for out in corpora if len(corpora) > 1 else ():
        rest = [c for c in corpora if c != out]
        best = max(settings, key=lambda s: statistics.mean(objective(table[s][c]) for c in rest))
        rows.append({"left_out": out, "chosen": best, "fit": statistics.mean(objective(table[best][c]) for c in rest),
                     "held_out": table[best][out]})
    return table, rows


def loco_markdown(corpora: dict[str, list[dict[str, Any]]], table: dict[Setting, dict[str, dict[str, float]]],
                  rows: list[dict[str, Any]], current: Setting, top: int) -> str:
    names = list(corpora)
    mean = {s: statistics.mean(objective(table[s][c]) for c in names) for s in table}
    lines = ["| setting | " + " | ".join(f"{n} hit@4 / @10" for n in names) + " | mean of (hit@4 + hit@10 + MRR)/3 |",
             "| --- |" + " --- |" * (len(names) + 1)]
    for s in dict.fromkeys([current, *sorted(table, key=lambda s: -mean[s])[:top]]):
        cells = " | ".join(f"{table[s][n]['hit@4']:.3f} / {table[s][n]['hit@10']:.3f}" for n in names)
        lines.append(f"| {s.label()}{' (current)' if s == current else ''} | {cells} | {mean[s]:.3f} |")
    if rows:
        lines += ["", "| left out | chosen on the others | held-out hit@4 / @10 / MRR | current there |",
                  "| --- | --- | --- | --- |"]
        for r in rows:
            h, c = r["held_out"], table[current][r["left_out"]]
            lines.append(f"| {r['left_out']} | {r['chosen'].label()} | {h['hit@4']:.3f} / {h['hit@10']:.3f} / "
                         f"{h['MRR']:.3f} | {c['hit@4']:.3f} / {c['hit@10']:.3f} / {c['MRR']:.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from muninn.evals.lab.corpora import report

    ap = argparse.ArgumentParser(prog="python -m muninn.evals.lab.corpora.replay", description=__doc__.splitlines()[0])
    ap.add_argument("traces", type=Path, help="a folder of CORPUS.jsonl written by `corpora run --trace`")
    ap.add_argument("--runs", type=Path, nargs="*", default=[], help="corpora.json files of the same runs: "
                    "the defaults and --no-rerank are added to them, and the report is written to --out")
    ap.add_argument("--out", type=Path, help="where corpora.md/.json/.png go (with --runs)")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--only", metavar="FIELD=V1,V2,...", help="vary this one setting, the rest as configured "
                    "(e.g. min_confidence=0,0.05,0.1,0.2,0.3,0.5); default: the whole grid")
    ap.add_argument("--unsure", action="store_true", help="vary search.second_weight and rerank.unsure_weights")
    ap.add_argument("--alternate", action="store_true", help="where the reranker is unsure, fusion in turn "
                    "with a feature's order (a lab lever), by min_confidence and search.per_file")
    ap.add_argument("--drop-degraded", type=float, default=0.0, metavar="SHARE",
                    help="leave out questions that fell back while recorded, up to this share of a corpus "
                    "(default 0: refuse the trace)")
    args = ap.parse_args(argv)
    corpora = load(args.traces, args.drop_degraded)
    base = SearchSettings()
    current = Setting.of(base)
    settings = varied(current, args.only) if args.only else \
        [current, *unsure_grid(current)] if args.unsure else \
        [current, *alternate_grid(current)] if args.alternate else [current, *grid(current)]
    table, rows = loco(corpora, settings, base)
    print(loco_markdown(corpora, table, rows, current, args.top))
    if args.runs:
        runs = [r for f in args.runs for r in report.read_json(f)]
        into_runs(runs, corpora, {"defaults": current, "--no-rerank": replace(current, rerank=False)}, base)
        report.write_all(runs, args.out or Path("evals/results"), "python -m muninn.evals.lab.corpora run --trace "
                         f"{args.traces}; python -m muninn.evals.lab.corpora.replay {args.traces}")
        failed = report.gate(runs)
        print("\ngate: " + ("holds" if not failed else "; ".join(failed)))
        return 1 if failed else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
