"""Does the cross-encoder gain from reading a long fact from its best paragraph (passage.py) instead of
from the top? Measured offline on recorded traces (trace.py) with the product's own reranker.

    python -m muninn.evals.lab.corpora.passage_lab TRACE_DIR OUT_DIR [--cache DIR] [--window 500 800]
    python -m muninn.evals.lab.corpora.passage_lab TRACE_DIR OUT_DIR --every-start

For every candidate of every recorded question, the cross-encoder's score is recomputed on the text
`rerank_text` would give with the fact read from its best paragraph; a candidate whose text does not
change keeps its recorded score. Writes OUT_DIR/<window>/CORPUS.jsonl for
`python -m muninn.evals.lab.corpora.replay`.

`--every-start` is the ceiling of any choice of paragraph: each fact longer than the configured window is
scored from every paragraph start (the top read as `rerank_text` reads it, a later start as the breadcrumb
and the fact from there) and keeps its best score, in OUT_DIR/every-start/. About six times the
pairs of scoring each recorded candidate once (18,537 against 3,162 on the handbook trace).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from muninn.core.config import SearchSettings
from muninn.core.ranking_profile import Ranking
from muninn.evals.lab.corpora import sources, trace
from muninn.plugins.search import doc as docmod
from muninn.plugins.search import passage, rerank
from muninn.plugins.search.query import analyse
from muninn.plugins.search.stages.rerank_stage import read_from, rerank_text


def every_start(d: docmod.Doc, chars: int) -> list[str]:
    """The fact read from each of its paragraph starts, as the cross-encoder would read it from there."""
    return [read_from(d, at, chars) for at in passage.paragraph_starts(d.fact or d.body)]


def _reader(exports: Path) -> Callable[[str], docmod.Doc]:
    """A candidate's exported fact, parsed once."""
    docs: dict[str, docmod.Doc] = {}

    def doc(uri: str) -> docmod.Doc:
        if uri not in docs:
            docs[uri] = docmod.parse(uri, trace.export_path(exports, uri).read_text(encoding="utf-8"))
        return docs[uri]
    return doc


def _ceiling(recs: list[dict[str, Any]], asked: dict[str, str], doc: Callable[[str], docmod.Doc], model: Any,
             cfg: SearchSettings) -> int:
    """Each long candidate's best score over its paragraph starts, in place; returns the pairs scored."""
    pairs = 0
    for r in recs:
        if r["cands"] and r["cands"][0]["ce"] is None:
            continue
        for c in r["cands"]:
            d = doc(c["uri"])
            if len(d.fact or d.body) <= Ranking(**cfg.ranking).passage_window:
                continue
            texts = every_start(d, Ranking(**cfg.ranking).content_chars)
            c["ce"] = max(model.rerank(asked[r["id"]], texts))
            pairs += len(texts)
    return pairs


def main() -> None:
    ap = trace.lab_args(__doc__.split("\n\n")[0])
    ap.add_argument("--window", type=int, nargs="+", default=[500, 800])
    ap.add_argument("--every-start", action="store_true", help="the ceiling: every paragraph start, best score")
    args = ap.parse_args()
    work = args.work or (args.cache or sources.cache_dir()) / "work"
    cfg = SearchSettings()
    model = rerank.load(cfg.rerank)
    for path in sorted(args.traces.glob("*.jsonl")):
        name = path.stem
        asked = {q.id: q.question for q in sources.build(name, args.cache).questions.questions}
        doc = _reader(Path(work) / name / "exports")
        if args.every_start:
            recs = trace.read(path)
            pairs = _ceiling(recs, asked, doc, model, cfg)
            trace.write(args.out / "every-start" / f"{name}.jsonl", recs)
            print(f"{name}: every start: {pairs} pairs", flush=True)
            continue
        for window in args.window:
            recs = trace.read(path)
            changed = pairs = 0
            for r in recs:
                q = asked[r["id"]]
                terms = analyse(q).terms
                texts, at = [], []
                for i, c in enumerate(r["cands"]):
                    d = doc(c["uri"])
                    chars = Ranking(**cfg.ranking).content_chars
                    new = rerank_text(d, chars, terms, window)
                    if new != rerank_text(d, chars):
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
