"""Choose an embedding model and its fusion weights together, by leaving one corpus out.

    python -m muninn.evals.lab.corpora.model_loco bge=TRACES_A e5=TRACES_B [--only keyword_weight=0.5,1,2]

Each TRACES folder is one live `corpora run --trace` made with that model (a fresh sync: the vectors, the
candidates and every cosine are the model's own). A candidate is (model, setting); each fold picks the
one with the best mean of (hit@4 + hit@10 + MRR) / 3 on the other corpora and scores it on the one left
out, beside the first model at the configured setting. Ranking is replay.py's, the product's own code.
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import replace
from pathlib import Path

from muninn.core.config import SearchSettings
from muninn.evals.lab.corpora import replay

Key = tuple[str, replay.Setting]


def wide_grid(current: replay.Setting) -> list[replay.Setting]:
    """replay.grid plus the vector weight and the configured confidence threshold."""
    out = [current]
    for s in replay.grid(current):
        for vec in (1.0, 2.0, 3.0):
            out.append(replace(s, vector_weight=vec))
            if s.rerank and s.min_confidence == 0.0:
                out.append(replace(s, vector_weight=vec, min_confidence=current.min_confidence))
    return list(dict.fromkeys(out))


def table(models: dict[str, Path], settings: list[replay.Setting], base: SearchSettings
          ) -> tuple[dict[Key, dict[str, dict[str, float]]], list[str]]:
    out: dict[Key, dict[str, dict[str, float]]] = {}
    names: list[str] = []
    for model, folder in models.items():
        corpora = replay.load(folder, 0.02)
        names = names or list(corpora)
        if sorted(corpora) != sorted(names):
            raise SystemExit(f"{folder} holds {sorted(corpora)}, not the corpora of the first model {sorted(names)}")
        for s in settings:
            out[(model, s)] = {c: replay.scores(recs, s, base) for c, recs in corpora.items()}
    return out, names


def markdown(got: dict[Key, dict[str, dict[str, float]]], names: list[str], reference: Key, top: int) -> str:
    def mean(k: Key, cs: list[str]) -> float:
        return statistics.mean(replay.objective(got[k][c]) for c in cs)

    def cell(m: dict[str, float]) -> str:
        return f"{m['hit@4']:.3f} / {m['hit@10']:.3f} / {m['MRR']:.3f}"

    lines = [f"| left out | chosen on the others | held out hit@4 / @10 / MRR | {reference[0]} as configured |",
             "| --- | --- | --- | --- |"]
    for out in names:
        rest = [c for c in names if c != out]
        best = max(got, key=lambda k: mean(k, rest))
        lines.append(f"| {out} | {best[0]}: {best[1].label()} | {cell(got[best][out])} | {cell(got[reference][out])} |")
    lines += ["", "| model: setting | " + " | ".join(f"{n} hit@4 / @10" for n in names) + " | mean |",
              "| --- |" + " --- |" * (len(names) + 1)]
    configured = [k for k in got if k[1] == reference[1]]
    for k in dict.fromkeys([*configured, *sorted(got, key=lambda k: -mean(k, names))[:top]]):
        cells = " | ".join(f"{got[k][n]['hit@4']:.3f} / {got[k][n]['hit@10']:.3f}" for n in names)
        lines.append(f"| {k[0]}: {k[1].label()}{' (configured)' if k[1] == reference[1] else ''} | {cells} | "
                     f"{mean(k, names):.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m muninn.evals.lab.corpora.model_loco",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", metavar="NAME=TRACES", help="a model's name and its trace folder")
    ap.add_argument("--only", metavar="FIELD=V1,V2,...", help="vary this one setting, the rest as configured; "
                    "default: the wide grid (replay's grid, and the vector weight 1-3)")
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args(argv)
    models = dict(m.split("=", 1) for m in args.models)
    base = SearchSettings()
    current = replay.Setting.of(base)
    settings = replay.varied(current, args.only) if args.only else wide_grid(current)
    got, names = table({m: Path(p) for m, p in models.items()}, settings, base)
    print(markdown(got, names, (next(iter(models)), current), args.top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
