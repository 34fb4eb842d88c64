"""Does the cross-encoder gain from reading a long fact from its best paragraph (passage.py) instead of
from the top? Measured offline on recorded traces (trace.py) with the product's own reranker.

    python -m muninn.evals.corpora.passage_lab TRACE_DIR OUT_DIR [--cache DIR] [--window 500 800]

For every candidate of every recorded question, the cross-encoder's score is recomputed on the text
`rerank_text` would give with the fact read from its best paragraph; a candidate whose text does not
change keeps its recorded score. Writes OUT_DIR/<window>/CORPUS.jsonl for
`python -m muninn.evals.corpora.replay`.
"""

from __future__ import annotations

from muninn.core.config import SearchSettings
from muninn.evals.corpora import sources, trace
from muninn.plugins.search import doc as docmod
from muninn.plugins.search import rerank
from muninn.plugins.search.query import analyse
from muninn.plugins.search.stages.rerank import rerank_text


def main() -> None:
    ap = trace.lab_args(__doc__.split("\n\n")[0])
    ap.add_argument("--window", type=int, nargs="+", default=[500, 800])
    args = ap.parse_args()
    work = args.work or (args.cache or sources.cache_dir()) / "work"
    cfg = SearchSettings()
    model = rerank.load(cfg.rerank)
    for path in sorted(args.traces.glob("*.jsonl")):
        name = path.stem
        asked = {q.id: q.question for q in sources.build(name, args.cache).questions.questions}
        docs = {}
        for window in args.window:
            recs = trace.read(path)
            changed = pairs = 0
            for r in recs:
                q = asked[r["id"]]
                terms = analyse(q).terms
                texts, at = [], []
                for i, c in enumerate(r["cands"]):
                    if c["uri"] not in docs:
                        text = trace.export_path(work / name / "exports", c["uri"]).read_text(encoding="utf-8")
                        docs[c["uri"]] = docmod.parse(c["uri"], text)
                    d = docs[c["uri"]]
                    new = rerank_text(d, cfg.content_chars, terms, window)
                    if new != rerank_text(d, cfg.content_chars):
                        texts.append(new)
                        at.append(i)
                if texts and r["cands"][0]["ce"] is not None:
                    for i, s in zip(at, model.rerank(q, texts), strict=True):
                        r["cands"][i]["ce"] = s
                    changed += 1
                    pairs += len(texts)
            trace.write(args.out / str(window) / f"{name}.jsonl", recs)
            print(f"{name}: window {window}: {pairs} pairs rescored in {changed} of {len(recs)} questions",
                  flush=True)


if __name__ == "__main__":
    main()
