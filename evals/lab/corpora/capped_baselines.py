"""The plain baselines under the product's own cap of hits a file (search.per_file), beside their uncapped
rows: the gate compares the defaults, which never show more than `per_file` sections of one source file in
the first four places, with plain retrievers that may show four.

    python -m muninn.evals.lab.corpora.capped_baselines CORPUS... [--baselines MiniLM-L6 ...] [--per-file 2 3]

No server: the sections are the ones the harness exports, embedded in this process as the harness's
baselines are (baselines.py), and capped by the product's own function (stages/cap.py) on the product's
own key of a section's file (`doc.file_key`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from muninn.core.config import EmbedSettings
from muninn.evals.lab.corpora import baselines, harness, sources
from muninn.plugins.search import ranking
from muninn.plugins.search.types import Candidate

DEPTH = 40     # ranked before the cap, as the product's lists are longer than its page


def capped(ranked: Sequence[str], file_of: dict[str, str], per_file: int | None, page: int = 4) -> list[str]:
    """`ranked` as the product's cap would show it (None: as ranked)."""
    if per_file is None:
        return list(ranked)
    return [c.uri for c in ranking.per_file([Candidate(uri=u) for u in ranked], file_of, per_file, window=page)]


def found(firsts: Sequence[int | None], k: int) -> int:
    return sum(1 for f in firsts if f is not None and f < k)


def measure(name: str, models: Sequence[str], caps: Sequence[int]) -> list[str]:
    built = sources.build(name)
    secs = harness.sections(built, "viking://resources/capped")
    qs = built.questions.questions
    golds = [harness.gold(q, secs) for q in qs]
    file_of = {s.uri: s.file for s in secs}
    texts = [s.text for s in secs]
    rows = []
    plain = [(baselines.dense_name(m), lambda m=m: baselines.Dense.load(m, EmbedSettings(), texts)) for m in models]
    for label, load in [*plain, (baselines.BM25_NAME, lambda: baselines.Bm25(texts))]:
        model = load()
        lists = [[secs[i].uri for i in model.rank(q.question, DEPTH)] for q in qs]
        cells = []
        for per_file in (None, *caps):
            firsts = [harness.first_rank(capped(ranked, file_of, per_file)[:10], want)
                      for ranked, want in zip(lists, golds, strict=True)]
            cells.append(f"{found(firsts, 4)} / {found(firsts, 10)}")
        rows.append(f"| {name} | {label} | {len(qs)} | " + " | ".join(cells) + " |")
        del model
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m muninn.evals.lab.corpora.capped_baselines",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("corpora", nargs="+", help=f"of: {', '.join(sources.CORPORA)}")
    ap.add_argument("--baselines", nargs="+", default=list(baselines.DEFAULT_MODELS), metavar="MODEL")
    ap.add_argument("--per-file", type=int, nargs="+", default=[2, 3], metavar="N")
    args = ap.parse_args(argv)
    baselines.check(args.baselines, EmbedSettings())
    print("| corpus | plain retriever | questions | uncapped, hit@4 / @10 | "
          + " | ".join(f"{n} a file" for n in args.per_file) + " |")
    print("| --- | --- | --- | --- | " + " | ".join("---" for _ in args.per_file) + " |")
    for name in args.corpora:
        for row in measure(name, args.baselines, args.per_file):
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
