"""A second embedder's cosine as one more fusion feature, replayed on recorded traces and chosen leaving
one corpus out: does a model the workspace does not store vectors for add what its own model misses?

    python -m muninn.evals.lab.corpora.second_model TRACE_DIR MODEL [CORPUS ...]

Each trace's candidates get the cosine of the question to "breadcrumb + body" (the plain dense baseline's
text, baselines.Dense) under MODEL; the feature's weight is chosen on the other corpora (replay.objective)
and scored on the one left out, against the same trace with weight 0 (the first model's fusion alone). A
trace recorded with embed.second_model on already holds the product's own feature (the second model's cosine
of the file as the sidecar embeds it): MODEL is then not read.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np

from muninn.core import config
from muninn.core import embed_prompts as prompts_mod
from muninn.evals.lab.corpora import baselines, harness, replay, sources
from muninn.plugins.embed.model import embed, load
from muninn.plugins.search.ranking import zscores

WEIGHTS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0)
FEATURE = "second"


def _root(recs: list[dict[str, Any]], name: str) -> str:
    """The run's folder, read back from a gold URI: viking://resources/corpora/<hex>."""
    uri = recs[0]["gold"][0]
    return uri[:uri.index(f"/{name}/")] if f"/{name}/" in uri else uri.rsplit("/", 3)[0]


def add_feature(recs: list[dict[str, Any]], name: str, model: str) -> None:
    built = sources.build(name)
    secs = harness.sections(built, _root(recs, name))
    text = {s.uri: s.text for s in secs}
    cfg = baselines.settings_for(model, config.load().embed)
    encoder, _ = load(cfg)
    prompts = prompts_mod.for_settings(cfg)
    uris = sorted({c["uri"] for r in recs for c in r["cands"] if c["uri"] in text})
    matrix = embed(encoder, [text[u] for u in uris], prompts.passage, batch_size=baselines.BATCH)
    row = {u: i for i, u in enumerate(uris)}
    asked = {q.id: q.question for q in built.questions.questions}
    queries = embed(encoder, [asked[r["id"]] for r in recs], prompts.query, batch_size=baselines.BATCH)
    for rec, q in zip(recs, queries, strict=True):
        for c in rec["cands"]:
            if c["uri"] in row:
                c["features"][FEATURE] = float(np.dot(matrix[row[c["uri"]]], q))
        rec["features"] = [*rec["features"], FEATURE]


def better_of(first: dict[str, float], second: dict[str, float], uris: list[str]) -> dict[str, float]:
    """max(z(first), z(second)) for each URI, each z-scored over `uris`: the `max` form."""
    a = zscores([first.get(u, 0.0) for u in uris])
    b = zscores([second.get(u, 0.0) for u in uris])
    return {u: max(x, y) for u, x, y in zip(uris, a, b, strict=True)}


def as_form(recs: list[dict[str, Any]], form: str) -> list[dict[str, Any]]:
    """From a trace whose "second" is the second model's raw cosine (as the product records it): `sum` keeps
    it, the product's form; `max` replaces it with the better of the two models' z-scored views."""
    if form != "max":
        return recs
    out = []
    for rec in recs:
        cands = [{**c, "features": dict(c["features"])} for c in rec["cands"]]
        uris = [c["uri"] for c in cands]
        best = better_of({c["uri"]: c["features"].get("vector", 0.0) for c in cands},
                         {c["uri"]: c["features"].get(FEATURE, 0.0) for c in cands}, uris)
        for c in cands:
            c["features"][FEATURE] = best[c["uri"]]
        out.append({**rec, "cands": cands})
    return out


def metrics(recs: list[dict[str, Any]], weight: float, base: Any) -> dict[str, float]:
    return replay.scores(recs, dataclasses.replace(replay.Setting.of(base), extra=((FEATURE, weight),)), base)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", type=Path)
    ap.add_argument("model")
    ap.add_argument("corpora", nargs="*")
    ap.add_argument("--form", choices=["sum", "max"], default="sum",
                    help="sum: the raw cosine as one more feature (the product's); max: the higher of the two "
                    "models' z-scored cosines")
    args = ap.parse_args(argv)
    base = config.load().search
    corpora = {}
    for f in sorted(args.traces.glob("*.jsonl")):
        if args.corpora and f.stem not in args.corpora:
            continue
        recs = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
        if not all(FEATURE in r["features"] for r in recs):     # a trace the product recorded has it already
            add_feature(recs, f.stem, args.model)
        corpora[f.stem] = as_form(recs, args.form)
    table = {name: {w: metrics(recs, w, base) for w in WEIGHTS} for name, recs in corpora.items()}
    print("| left out | chosen weight | held out hit@4 / @10 / MRR | weight 0 |")
    print("| --- | --- | --- | --- |")
    for out in corpora:
        rest = [n for n in corpora if n != out]
        chosen = max(WEIGHTS, key=lambda w: (sum(replay.objective(table[n][w]) for n in rest), -w))
        got, zero = table[out][chosen], table[out][0.0]
        print(f"| {out} | {chosen:g} | {got['hit@4']:.3f} / {got['hit@10']:.3f} / {got['MRR']:.3f} | "
              f"{zero['hit@4']:.3f} / {zero['hit@10']:.3f} / {zero['MRR']:.3f} |")
    print()
    whole = max(WEIGHTS, key=lambda w: (sum(replay.objective(table[n][w]) for n in corpora), -w))
    print(f"Chosen on every corpus: weight {whole:g}.")
    print()
    for name, row in table.items():
        print(name, " ".join(f"w{w:g}={m['hit@4']:.3f}/{m['hit@10']:.3f}" for w, m in row.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
