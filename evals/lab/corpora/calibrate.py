"""Calibrate a hit's relevance and the "no strong match" warning on recorded corpora (trace.py).

    MUNINN_CONFIG=... python -m muninn.evals.lab.corpora.calibrate TRACE_DIR [--out report.md] [--write]

Every recorded question is ranked as the configured pipeline would (replay.py, the product's own code); the
hits it would show in its top 4 are labelled right or wrong by the question's gold. Relevance is a logistic
curve over the cross-encoder's logit x and how far it sits under the query's best logit (plugins/search/
relevance.py): three constants, fitted on those hits, so it reads as "the observed share of hits with this
evidence that were right". The simpler curve over x alone, fitted on first hits, is scored beside it.
The warning fires when the best relevance is under `search.strong_match`; the threshold is the one that
flags the most questions whose top 4 holds no right hit while calling at most a tenth of right first hits
weak, chosen on all corpora but one and scored on the one left out.

`--write` puts the fitted constants into plugins/search/relevance.py (between its CALIBRATION markers).
`--shipped` fits nothing: it scores the shipped curve and `search.strong_match` on each corpus, which is the
held-out measurement for corpora the constants were not fitted on.
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
FALSE_WARNINGS = 0.10   # at most this share of right first hits may be called weak
# What a trace recorded before it named its reranker was scored with: the packaged fallback, on a machine
# without the hub's weights.
RERANKER = "cross-encoder/ms-marco-MiniLM-L-12-v2"
THRESHOLDS = [round(x, 3) for x in np.arange(0.02, 0.96, 0.02)]
BINS = [(0.0, 0.1), (0.1, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.01)]
RELEVANCE_PY = lab.REPO / "plugins" / "search" / "relevance.py"
Curve = tuple[float, float, float]      # (slope, gap, intercept), as relevance.CALIBRATION holds them


@dataclass(frozen=True)
class Shown:
    """One hit the pipeline would show: where, with what evidence, and whether it is right."""

    question: str
    rank: int
    p: float            # the rerank probability, as the hit carries it (rounded by the stage)
    best: float         # the highest one among the candidates the cross-encoder read
    right: bool
    answered: bool      # some hit of the question's top 4 is right

    @property
    def x(self) -> float:
        return _logit(self.p)

    @property
    def gap(self) -> float:
        return max(_logit(self.best) - self.x, 0.0)


def _logit(p: float) -> float:
    p = min(max(p, 1e-7), 1 - 1e-7)     # as the product reads a probability back
    return math.log(p / (1 - p))


def shown(recs: list[dict[str, Any]], base: SearchSettings) -> list[Shown]:
    s = replay.Setting.of(base)
    cfg = s.cfg(base)
    out = []
    for rec in recs:
        by_uri, gold = {c["uri"]: c for c in rec["cands"]}, set(rec["gold"])
        uris, read = replay.ranked(rec, s, cfg)
        scored = {u: round(by_uri[u]["ce"], 5) for u in read if by_uri[u]["ce"] is not None}  # as the stage
        if not scored:
            continue
        best = max(scored.values())
        answered = any(u in gold for u in uris[:SEEN])
        out += [Shown(rec["id"], i, scored[u], best, u in gold, answered)
                for i, u in enumerate(uris[:SEEN]) if u in scored]
    return out


def relevance(h: Shown, c: Curve) -> float:
    """What the product says (relevance.of), under curve `c`."""
    slope, gap, intercept = c
    return 1 / (1 + math.exp(-(slope * h.x - gap * h.gap + intercept)))


def fit(hits: list[Shown], with_gap: bool, ridge: float = 1e-3) -> Curve:
    """Logistic regression by Newton's method (a little ridge keeps a separable set finite)."""
    cols = [[h.x for h in hits], *([[-h.gap for h in hits]] if with_gap else []), [1.0] * len(hits)]
    x = np.column_stack([np.asarray(c, float) for c in cols])
    y = np.asarray([h.right for h in hits], float)
    w = np.zeros(x.shape[1])
    for _ in range(100):
        p = 1 / (1 + np.exp(-(x @ w)))
        step = np.linalg.solve((x * (p * (1 - p))[:, None]).T @ x + ridge * np.eye(len(w)), x.T @ (p - y) + ridge * w)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return (float(w[0]), float(w[1]), float(w[2])) if with_gap else (float(w[0]), 0.0, float(w[1]))


CURVES = {  # name -> how it is fitted
    "x and gap, on the top 4": lambda hits: fit(hits, with_gap=True),
    "x alone, on first hits": lambda hits: fit([h for h in hits if h.rank == 0], with_gap=False),
}
RAW: Curve = (1.0, 0.0, 0.0)            # the probability as it is


def _loss(hits: list[Shown], c: Curve) -> float:
    return statistics.mean(-math.log(max(1e-9, r if h.right else 1 - r)) for h in hits for r in [relevance(h, c)])


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


def warned(hits: list[Shown], c: Curve, threshold: float) -> Warned:
    """The warning as relevance.judge gives it: the best relevance (the best-scored candidate's: its gap is 0)
    under the threshold."""
    by_q: dict[str, list[Shown]] = {}
    for h in hits:
        by_q.setdefault(h.question, []).append(h)
    w = Warned()
    for q_hits in by_q.values():
        first = min(q_hits, key=lambda h: h.rank)
        best = Shown(first.question, -1, first.best, first.best, False, first.answered)
        fires = relevance(best, c) < threshold
        w.questions += 1
        w.fired += fires
        w.wrong += not first.answered
        w.fired_wrong += fires and not first.answered
        if first.rank == 0 and first.right:
            w.right_top1 += 1
            w.fired_on_right_top1 += fires
    return w


def choose(hits: list[Shown], c: Curve) -> float:
    """The threshold that flags the most questions with no right hit in the top 4 while it warns on at most
    FALSE_WARNINGS of the questions whose first hit is right (the lower one on a tie: fewer warnings). A
    false warning tells the reader to doubt a right answer; best F1 warned on half of those held out."""
    def key(t: float) -> tuple[bool, float, float]:
        w = warned(hits, c, t)
        return w.fired_on_right_top1 <= FALSE_WARNINGS * w.right_top1, w.recall, -t
    return max(THRESHOLDS, key=key)


def report(corpora: dict[str, list[Shown]], strong_before: float) -> tuple[str, Curve, float]:
    """The fit on every corpus, then each corpus scored with what was fitted on the others (leaving one
    out); with a single corpus there are no others, and it is scored in-sample, as the headings say."""
    every = [h for hs in corpora.values() for h in hs]
    name_, fitter = next(iter(CURVES.items()))
    shipped = fitter(every)
    threshold = choose(every, shipped)
    asked = sum(len({h.question for h in hs}) for hs in corpora.values())
    slope, gap, intercept = shipped
    loco = len(corpora) > 1
    how = "leaving one corpus out" if loco else "in-sample (one corpus: nothing to leave out)"
    lines = [f"Fitted on the {len(every)} hits the replayed pipeline shows in its top {SEEN} for {asked} questions "
             f"({name_}): relevance = sigmoid({slope:.4f} * x - {gap:.4f} * (best - x) + {intercept:.4f}), x the "
             "hit's rerank logit, best the query's highest. The warning's threshold, chosen on all corpora: "
             f"{threshold:g}.", "",
             f"### Relevance, {how} (log loss; lower is better)", "",
             "| corpus | first hits (right) | hits 2–4 (right) | "
             + " | ".join(f"{n}: first / 2–4" for n in CURVES) + " | raw probability: first / 2–4 |",
             "| --- | --- | --- |" + " --- |" * (len(CURVES) + 1)]
    held: dict[str, list[tuple[Shown, float]]] = {n: [] for n in CURVES}
    rows = []
    for name, hits in corpora.items():
        rest = [h for n, hs in corpora.items() if n != name for h in hs] if loco else hits
        firsts, later = [h for h in hits if h.rank == 0], [h for h in hits if h.rank > 0]
        cells = []
        for n, f in CURVES.items():
            c = f(rest)
            held[n] += [(h, relevance(h, c)) for h in hits]
            cells.append(f"{_loss(firsts, c):.3f} / {_loss(later, c):.3f}")
        cells.append(f"{_loss(firsts, RAW):.3f} / {_loss(later, RAW):.3f}")
        lines.append(f"| {name} | {len(firsts)} ({sum(h.right for h in firsts)}) | {len(later)} "
                     f"({sum(h.right for h in later)}) | " + " | ".join(cells) + " |")
        c = fitter(rest)
        t = choose(rest, c)
        rows.append(_row(name, warned(hits, c, t), t, warned(hits, RAW, strong_before)))
    pairs = held[name_]
    lines += ["", f"### Reliability of the shipped curve ({name_}), {how}", "",
              "| relevance | first hits | mean relevance | share right | hits 2–4 | mean relevance | share right |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for lo, hi in BINS:
        first = [(h, r) for h, r in pairs if lo <= r < hi and h.rank == 0]
        later = [(h, r) for h, r in pairs if lo <= r < hi and h.rank > 0]
        if first or later:
            lines.append(f"| {lo:g}–{min(hi, 1):g} | {len(first)} | {_mean(r for _, r in first)} | "
                         f"{_mean(h.right for h, _ in first)} | {len(later)} | {_mean(r for _, r in later)} | "
                         f"{_mean(h.right for h, _ in later)} |")
    tops = [(h, r) for h, r in pairs if h.rank == 0 and h.right]
    lines += ["", f"Right first hits shown with a relevance under 0.01: {sum(h.p < 0.01 for h, _ in tops)} of "
              f"{len(tops)} as the raw probability, {sum(r < 0.01 for _, r in tops)} calibrated."]
    lines += ["", f"### The warning, its threshold chosen {how}", "",
              "Fired: the best relevance is under the threshold. Wrong: no right hit in the top 4. Precision = "
              "fired and wrong / fired; recall = fired and wrong / wrong; false warnings = fired while the first "
              f"hit is right. Before: the raw probability under {strong_before:g}.", "",
              "| corpus | questions | wrong | threshold | fired | precision | recall | "
              "false warnings (first hit right) | before: precision / recall, false warnings |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- |", *rows]
    return "\n".join(lines), shipped, threshold


def shipped_report(corpora: dict[str, list[Shown]], threshold: float) -> str:
    """The warning as shipped (relevance.CALIBRATION, search.strong_match) on each corpus: nothing is fitted."""
    from muninn.plugins.search import relevance as product

    curve = product.CALIBRATION[RERANKER]
    lines = [f"The shipped curve {curve} and search.strong_match {threshold:g}, fitted on none of these corpora.", "",
             "| corpus | questions | wrong | fired | precision | recall | false warnings (first hit right) |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, hits in corpora.items():
        w = warned(hits, curve, threshold)
        lines.append(f"| {name} | {w.questions} | {w.wrong} | {w.fired} | {w.precision:.2f} | {w.recall:.2f} | "
                     f"{w.fired_on_right_top1}/{w.right_top1} |")
    return "\n".join(lines)


def _mean(values: Any) -> str:
    got = list(values)
    return f"{statistics.mean(got):.2f}" if got else "–"


def _row(name: str, w: Warned, t: float, raw: Warned) -> str:
    return (f"| {name} | {w.questions} | {w.wrong} | {t:g} | {w.fired} | {w.precision:.2f} | {w.recall:.2f} | "
            f"{w.fired_on_right_top1}/{w.right_top1} | {raw.precision:.2f} / {raw.recall:.2f}, "
            f"{raw.fired_on_right_top1}/{raw.right_top1} |")


def write_constants(c: Curve) -> None:
    text = RELEVANCE_PY.read_text(encoding="utf-8")
    begin, end = "# CALIBRATION (written by evals/lab/corpora/calibrate.py --write)\n", "# END CALIBRATION\n"
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    block = f'CALIBRATION = {{"{RERANKER}": ({c[0]:.4f}, {c[1]:.4f}, {c[2]:.4f})}}\n'
    RELEVANCE_PY.write_text(head + begin + block + end + tail, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    from muninn.core import config

    ap = argparse.ArgumentParser(prog="python -m muninn.evals.lab.corpora.calibrate",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("traces", type=Path, help="a folder of CORPUS.jsonl written by `corpora run --trace`")
    ap.add_argument("--out", type=Path, help="write the report here (else stdout)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="put the fitted constants into plugins/search/relevance.py")
    ap.add_argument("--drop-degraded", type=float, default=0.0, metavar="SHARE")
    ap.add_argument("--before", type=float, default=0.05, metavar="P", help="the raw-probability threshold "
                    "to compare with (search.strong_match before the calibration)")
    mode.add_argument("--shipped", action="store_true", help="fit nothing: score the shipped curve and threshold")
    args = ap.parse_args(argv)
    base = config.load().search
    recorded = replay.load(args.traces, args.drop_degraded)
    if others := {r.get("reranker") or RERANKER for recs in recorded.values() for r in recs} - {RERANKER}:
        print(f"error: traces scored with {', '.join(sorted(others))}; this fits {RERANKER} only", file=sys.stderr)
        return 2
    corpora = {name: shown(recs, base) for name, recs in recorded.items()}
    fitted = None if args.shipped else report(corpora, args.before)
    text = fitted[0] if fitted else shipped_report(corpora, replay.profile(base).strong_match)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    if fitted and args.write:
        _, shipped, threshold = fitted
        write_constants(shipped)
        print(f"\nwrote {RELEVANCE_PY}; search.strong_match's default should be {threshold:g}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
