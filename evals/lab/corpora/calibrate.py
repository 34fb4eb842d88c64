"""Calibrate a hit's relevance and the "no strong match" warning on recorded corpora (trace.py).

    MUNINN_CONFIG=... python -m muninn.evals.lab.corpora.calibrate TRACE_DIR [--out report.md] [--write]

Every recorded question is ranked as the configured pipeline would (replay.py, the product's own code); the
hits it would show in the top 4 are labelled right or wrong by the question's gold. Relevance is fitted as
a logistic curve over the cross-encoder's logit (two constants; monotone when the slope is positive), so it
reads as "the observed share of hits with this evidence that were right". The warning fires when the top
hit's relevance is under `search.strong_match`; its threshold is chosen to maximise F1 at telling a
question whose top 4 holds no right hit, on all corpora but one, and scored on the one left out.

`--write` puts the fitted constants into plugins/search/relevance.py (between its CALIBRATION markers).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from muninn.core.config import SearchSettings
from muninn.evals import lab
from muninn.evals.lab.corpora import replay

SEEN = 4            # the hits a reader looks at
# What a trace recorded before it named its reranker was scored with: the packaged fallback, on a machine
# without the hub's weights.
RERANKER = "cross-encoder/ms-marco-MiniLM-L-12-v2"
THRESHOLDS = [round(x, 3) for x in np.arange(0.02, 0.81, 0.02)]
BINS = [(0.0, 0.1), (0.1, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.0)]
RELEVANCE_PY = lab.REPO / "plugins" / "search" / "relevance.py"


@dataclass(frozen=True)
class Shown:
    """One hit the pipeline would show: where, with what evidence, and whether it is right."""

    question: str
    rank: int
    logit: float
    right: bool


def logit(p: float) -> float:
    p = min(max(p, 1e-7), 1 - 1e-7)     # as the rerank stage's _logit
    return math.log(p / (1 - p))


def shown(recs: list[dict[str, Any]], base: SearchSettings) -> list[Shown]:
    s = replay.Setting.of(base)
    cfg = s.cfg(base)
    out = []
    for rec in recs:
        by_uri, gold = {c["uri"]: c for c in rec["cands"]}, set(rec["gold"])
        for i, uri in enumerate(replay.rank(rec, s, cfg)[:SEEN]):
            ce = by_uri[uri]["ce"]
            if ce is not None:
                out.append(Shown(rec["id"], i, logit(ce), uri in gold))
    return out


def fit(xs: list[float], ys: list[bool], ridge: float = 1e-3) -> tuple[float, float]:
    """(slope, intercept) of P(right) = sigmoid(slope * x + intercept), by Newton's method (a little ridge
    keeps a separable set finite)."""
    x = np.column_stack([np.asarray(xs, float), np.ones(len(xs))])
    y = np.asarray(ys, float)
    w = np.zeros(2)
    for _ in range(50):
        p = 1 / (1 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) + ridge * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + ridge * np.eye(2)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return float(w[0]), float(w[1])


def relevance(x: float, slope: float, intercept: float) -> float:
    return 1 / (1 + math.exp(-(slope * x + intercept)))


def log_loss(hits: list[Shown], slope: float, intercept: float) -> float:
    eps = 1e-9
    return statistics.mean(-math.log(max(eps, p if h.right else 1 - p))
                           for h in hits for p in [relevance(h.logit, slope, intercept)])


@dataclass
class Warned:
    fired_wrong: int = 0        # fired, and no right hit in the top 4
    fired: int = 0
    wrong: int = 0              # questions with no right hit in the top 4
    fired_on_right_top1: int = 0
    right_top1: int = 0
    questions: int = 0

    @property
    def precision(self) -> float:
        return self.fired_wrong / self.fired if self.fired else 1.0

    @property
    def recall(self) -> float:
        return self.fired_wrong / self.wrong if self.wrong else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def warned(hits: list[Shown], slope: float, intercept: float, threshold: float) -> Warned:
    """The warning on the top hit's relevance, against whether any of the top 4 was right."""
    by_q: dict[str, list[Shown]] = {}
    for h in hits:
        by_q.setdefault(h.question, []).append(h)
    w = Warned()
    for q_hits in by_q.values():
        top = min(q_hits, key=lambda h: h.rank)
        fires = relevance(top.logit, slope, intercept) < threshold
        wrong = not any(h.right for h in q_hits)
        w.questions += 1
        w.fired += fires
        w.wrong += wrong
        w.fired_wrong += fires and wrong
        if top.rank == 0 and top.right:
            w.right_top1 += 1
            w.fired_on_right_top1 += fires
    return w


def choose(hits: list[Shown], slope: float, intercept: float) -> float:
    """The threshold with the best F1 (the lower one on a tie: fewer false warnings)."""
    return max(THRESHOLDS, key=lambda t: (warned(hits, slope, intercept, t).f1, -t))


def _row(name: str, w: Warned, t: float, raw: Warned) -> str:
    return (f"| {name} | {w.questions} | {w.wrong} | {t:g} | {w.fired} | {w.precision:.2f} | {w.recall:.2f} | "
            f"{w.fired_on_right_top1}/{w.right_top1} | {raw.precision:.2f} / {raw.recall:.2f}, "
            f"{raw.fired_on_right_top1}/{raw.right_top1} |")


def report(corpora: dict[str, list[Shown]], strong_before: float) -> tuple[str, tuple[float, float, float]]:
    every = [h for hs in corpora.values() for h in hs]
    slope, intercept = fit([h.logit for h in every], [h.right for h in every])
    threshold = choose(every, slope, intercept)
    asked = sum(len({h.question for h in hs}) for hs in corpora.values())
    lines = [f"Fitted on all {len(every)} shown hits (top {SEEN}) of {asked} "
             f"questions: relevance = sigmoid({slope:.4f} * logit(p) + {intercept:.4f}), p the cross-encoder's "
             f"probability; the warning's threshold {threshold:g}.", "",
             "### Relevance, leaving one corpus out (log loss of each hit's right/wrong; lower is better)", "",
             "| left out | hits | right | slope, intercept fitted on the others | log loss: calibrated | "
             "raw probability |", "| --- | --- | --- | --- | --- | --- |"]
    rows = []
    for name, hits in corpora.items():
        rest = [h for n, hs in corpora.items() if n != name for h in hs]
        a, b = fit([h.logit for h in rest], [h.right for h in rest])
        raw = statistics.mean(-math.log(max(1e-9, min(1 - 1e-9, (1 / (1 + math.exp(-h.logit))) if h.right
                                                      else 1 - 1 / (1 + math.exp(-h.logit))))) for h in hits)
        lines.append(f"| {name} | {len(hits)} | {sum(h.right for h in hits)} | {a:.3f}, {b:.3f} | "
                     f"{log_loss(hits, a, b):.3f} | {raw:.3f} |")
        t = choose(rest, a, b)
        rows.append(_row(name, warned(hits, a, b, t), t, warned(hits, 1.0, 0.0, strong_before)))
    lines += ["", "### Reliability, leaving one corpus out (each hit's relevance from the curve fitted without "
              "its corpus)", "", "| relevance | hits | mean relevance | share right |",
              "| --- | --- | --- | --- |"]
    held = [(h, relevance(h.logit, *fit([x.logit for n, xs in corpora.items() if n != name for x in xs],
                                          [x.right for n, xs in corpora.items() if n != name for x in xs])))
            for name, hits in corpora.items() for h in hits] if len(corpora) > 1 else []
    for lo, hi in BINS:
        inside = [(h, r) for h, r in held if lo <= r < hi or (hi == 1.0 and r == 1.0)]
        if inside:
            lines.append(f"| {lo:g}–{hi:g} | {len(inside)} | {statistics.mean(r for _, r in inside):.2f} | "
                         f"{statistics.mean(h.right for h, _ in inside):.2f} |")
    tops = [(h, r) for h, r in held if h.rank == 0 and h.right]
    raw_low = sum(1 / (1 + math.exp(-h.logit)) < 0.01 for h, _ in tops)
    lines += ["", f"Right first hits shown with a relevance under 0.01: {raw_low} of {len(tops)} as the raw "
              f"probability, {sum(r < 0.01 for _, r in tops)} calibrated (leaving their corpus out)."]
    lines += ["", "### The warning, its threshold chosen leaving one corpus out", "",
              "Fired: the top hit's relevance is under the threshold. Wrong: no right hit in the top 4. Precision = "
              "fired and wrong / fired; recall = fired and wrong / wrong; false warnings = fired while the top hit "
              f"is right. Before: the raw probability under {strong_before:g}.", "",
              "| left out | questions | wrong | threshold (chosen on the others) | fired | precision | recall | "
              "false warnings (top 1 right) | before: precision / recall, false warnings |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- |", *rows]
    return "\n".join(lines), (slope, intercept, threshold)


def write_constants(slope: float, intercept: float) -> None:
    text = RELEVANCE_PY.read_text(encoding="utf-8")
    begin, end = "# CALIBRATION (written by evals/lab/corpora/calibrate.py --write)\n", "# END CALIBRATION\n"
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    block = f'CALIBRATION = {{"{RERANKER}": ({slope:.4f}, {intercept:.4f})}}\n'
    RELEVANCE_PY.write_text(head + begin + block + end + tail, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    from muninn.core import config

    ap = argparse.ArgumentParser(prog="python -m muninn.evals.lab.corpora.calibrate",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("traces", type=Path, help="a folder of CORPUS.jsonl written by `corpora run --trace`")
    ap.add_argument("--out", type=Path, help="write the report here (else stdout)")
    ap.add_argument("--write", action="store_true", help="put the fitted constants into plugins/search/relevance.py")
    ap.add_argument("--drop-degraded", type=float, default=0.0, metavar="SHARE")
    args = ap.parse_args(argv)
    base = config.load().search
    recorded = replay.load(args.traces, args.drop_degraded)
    if others := {r.get("reranker") or RERANKER for recs in recorded.values() for r in recs} - {RERANKER}:
        print(f"error: traces scored with {', '.join(sorted(others))}; this fits {RERANKER} only", file=sys.stderr)
        return 2
    corpora = {name: shown(recs, base) for name, recs in recorded.items()}
    text, (slope, intercept, threshold) = report(corpora, base.strong_match)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    if args.write:
        write_constants(slope, intercept)
        print(f"\nwrote {RELEVANCE_PY}; set search.strong_match's default to {threshold:g}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
