"""Does linear fusion's `fact` feature gain from reading a long fact by its best window? Measured offline
on recorded traces (trace.py), with the sidecar's own model in-process.

    python -m muninn.evals.lab.corpora.window_lab TRACE_DIR OUT_DIR [--cache DIR] [--chars 600 800 1000]

The `fact` feature is the question's cosine to the fact without its context, which the model cuts at
256 tokens: a documentation fact of ~1,400 characters is read up to ~1,000 of them, and most answers sit
past character 400 (evals/results/corpora.md). Here each candidate's feature is replaced by its best
cosine over windows of the fact (paragraphs packed up to N characters, each led by the fact's breadcrumb,
as a reader sees a section under its heading). Writes OUT_DIR/<N>/CORPUS.jsonl, which
`python -m muninn.evals.lab.corpora.replay` ranks like any trace, and OUT_DIR/0/ with the feature recomputed
the product's way, so the comparison is with the same model in the same process.
"""

from __future__ import annotations

import numpy as np

from muninn.core.config import EmbedSettings
from muninn.evals.lab.corpora import sources, trace
from muninn.plugins.embed.model import load
from muninn.plugins.search import windows as window_texts

windows = window_texts.windows     # one owner: the product's (plugins/search/windows.py)
fact_texts = window_texts.texts


def put_window(features: dict[str, float], window: float, which: str) -> None:
    """Put the best window's cosine in a candidate's recorded features (only those it was scored on)."""
    if which in ("fact", "both") and "fact" in features:
        features["fact"] = window
    if which == "vector" and "vector" in features:
        features["vector"] = max(features["vector"], window)
    elif which == "both" and "vector" in features:
        features["vector"] = window


def main() -> None:
    ap = trace.lab_args(__doc__.split("\n\n")[0])
    ap.add_argument("--chars", type=int, nargs="+", default=[600, 800, 1000])
    ap.add_argument("--feature", choices=["fact", "vector", "both"], default="fact",
                    help="which cosine the best window replaces: the fact's, the file's (kept when higher), or both")
    args = ap.parse_args()
    work = args.work or (args.cache or sources.cache_dir()) / "work"
    model, _ = load(EmbedSettings())
    for path in sorted(args.traces.glob("*.jsonl")):
        name = path.stem
        recs = trace.read(path)
        asked = {q.id: q.question for q in sources.build(name, args.cache).questions.questions}
        files = {c["uri"]: trace.export_path(work / name / "exports", c["uri"]).read_text(encoding="utf-8")
                 for r in recs for c in r["cands"]}
        qvec = dict(zip(asked, model.encode(list(asked.values())), strict=True))
        for chars in (0, *args.chars):
            texts = {u: fact_texts(t, chars) for u, t in files.items()}
            flat = [w for ws in texts.values() for w in ws]
            mat = model.encode(flat)
            at, best = 0, {}
            for u, ws in texts.items():
                best[u] = mat[at:at + len(ws)]
                at += len(ws)
            for r in recs:
                for c in r["cands"]:
                    # chars 0 is the product's own feature recomputed in this process: the fact's alone.
                    put_window(c["features"], float(np.max(best[c["uri"]] @ qvec[r["id"]])),
                            args.feature if chars else "fact")
            trace.write(args.out / str(chars) / f"{name}.jsonl", recs)
            print(f"{name}: chars {chars}: {len(flat)} texts for {len(texts)} facts", flush=True)


if __name__ == "__main__":
    main()
