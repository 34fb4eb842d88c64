"""Does an absolute relevance signal tell a real question from a stop-word or off-topic one?

Offline, no server: the sample corpus (exported from examples/) with the sealed ops questions, and one
LoCoMo dev conversation as notes with its questions. For a real question the signal is read on its
expected fact (what the top hit carries when search finds it); for a nonsense query it is the best over
the candidates the reranker would see (the top 20 by cosine and the top 20 by words in common). Two
signals: the cross-encoder's sigmoid probability (what `rerank` records per hit) and the embedding
cosine of the fact.

    .venv/bin/python -m muninn.evals.lab.bench_relevance [--conversation 26] [--sample 200]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml

from muninn.core import config
from muninn.evals import lab
from muninn.evals.benchutil import pct
from muninn.evals.lab import locomo
from muninn.plugins.search import doc as docmod
from muninn.plugins.search import rerank
from muninn.plugins.search.stages.rerank_stage import rerank_text

ROOT = lab.REPO

# Stop words, keyboard noise and well-formed questions about things no infrastructure notes hold.
NONSENSE = [
    "the", "a", "and", "of the", "what is it", "how do i", "is", "to be or not to be", "it", "this that",
    "asdf", "qwerty uiop", "xyzzy plugh", "lorem ipsum dolor sit amet", "zzzz", "foo bar baz", "aaaaaaaa",
    "sdkjfh skdjf wer", "blorp fnord quux", "1234567", "!!!", "purple elephant symphony",
    "how do I bake sourdough bread", "who won the 1998 football world cup", "recipe for lasagne",
    "what is the capital of Australia", "best hiking trails in Patagonia", "how many legs does a spider have",
    "translate good morning into Japanese", "when was Beethoven born", "tips for growing tomatoes",
    "what colour is a flamingo", "how to knit a scarf", "distance from the earth to the moon",
    "the plot of Hamlet", "why is the sky blue",
]


def sample_docs(home: Path) -> dict[str, docmod.Doc]:
    env = {**__import__("os").environ, "MUNINN_HOME": str(home)}
    subprocess.run([sys.executable, "-m", "muninn", "--config", str(ROOT / "examples/muninn.yaml"), "export", "all",
                    "--json"], env=env, check=True, capture_output=True)
    return {str(p.relative_to(home)): docmod.parse(str(p.relative_to(home)), p.read_text())
            for p in sorted((home / "exports").rglob("*.md"))}


def ops_questions(docs: dict[str, docmod.Doc]) -> list[tuple[str, list[str]]]:
    qs = yaml.safe_load((ROOT / "evals/questions/ops.yaml").read_text())["questions"]
    out = []
    for q in qs:
        hay = {u: " ".join([u, str(d.meta.get("source_path", "")), d.title]) for u, d in docs.items()}
        gold = [u for u, h in hay.items() if any(e in h for e in q["expect"])]
        if gold:
            out.append((q["question"], gold))
    return out


def locomo_set(data: Path, conv_id: str, sample: int) -> tuple[dict[str, docmod.Doc], list[tuple[str, list[str]]]]:
    conv = json.loads((data / f"{conv_id}.json").read_text())
    files = locomo.corpus(conv, conv_id, window=1)
    docs = {u: docmod.parse(u, t) for u, t in files.items()}
    qs = locomo.questions(conv)
    step = max(1, len(qs) // sample)
    out = []
    for q in qs[::step][:sample]:
        gold = [u for u in docs if any(u.endswith("/" + locomo.file_name(e)) for e in q["evidence"])]
        if gold:
            out.append((q["question"], gold))
    return docs, out


def measure(name: str, docs: dict[str, docmod.Doc], questions: list[tuple[str, list[str]]], model, encoder) -> dict:
    uris = list(docs)
    texts = [rerank_text(docs[u], 1500) for u in uris]
    facts = encoder.encode([docs[u].fact or docs[u].body for u in uris])
    index = {u: i for i, u in enumerate(uris)}
    real_p, real_c = [], []
    for q, gold in questions:
        real_p.append(max(model.rerank(q, [texts[index[g]] for g in gold])))
        qv = encoder.encode([q])[0]
        real_c.append(max(float(facts[index[g]] @ qv) for g in gold))
    junk_p, junk_c = [], []
    words = [set(t.lower().split()) for t in texts]
    for q in NONSENSE:
        cos = facts @ encoder.encode([q])[0]
        # What the pipeline's reranker would see: the vector top 20 and the keyword top 20 (here: most
        # query words in common), not the whole corpus (which would take an hour per corpus on 2 cores).
        overlap = np.array([len(w & set(q.lower().split())) for w in words])
        seen = set(np.argsort(-cos)[:20]) | set(np.argsort(-overlap, kind="stable")[:20])
        junk_p.append(max(model.rerank(q, [texts[i] for i in sorted(seen)])))
        junk_c.append(float(np.max(cos)))
    return {"corpus": name, "facts": len(uris), "questions": len(questions), "nonsense": len(NONSENSE),
            "real_p": real_p, "junk_p": junk_p, "real_c": real_c, "junk_c": junk_c}


def table(rows: list[dict], key: str, thresholds: list[float]) -> list[str]:
    out = ["| corpus | real p10 | real p50 | nonsense p50 | nonsense p90 | nonsense max | "
           + " | ".join(f"< {t}: real / nonsense" for t in thresholds) + " |",
           "|---" * (6 + len(thresholds)) + "|"]
    for r in rows:
        real, junk = r[f"real_{key}"], r[f"junk_{key}"]
        cells = [f"{sum(v < t for v in real)}/{len(real)} / {sum(v < t for v in junk)}/{len(junk)}"
                 for t in thresholds]
        out.append(f"| {r['corpus']} | {pct(real, .1):.3f} | {pct(real, .5):.3f} | {pct(junk, .5):.3f} | "
                   f"{pct(junk, .9):.3f} | {max(junk):.3f} | " + " | ".join(cells) + " |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--conversation", default="26")
    ap.add_argument("--sample", type=int, default=200)
    ap.add_argument("--data", type=Path, default=locomo.DATA, help="the LoCoMo dev folder")
    ap.add_argument("--model", default="cross-encoder/ms-marco-MiniLM-L-12-v2",
                    help="the reranker (default: the one muninn ships; bge-reranker-v2-m3 takes seconds a pair)")
    args = ap.parse_args()
    from muninn.plugins.embed import model as embed_model

    settings = config.load(None)
    model = rerank.load(settings.search.rerank.model_copy(update={"model": args.model, "fallbacks": []}))
    encoder, _ = embed_model.load(settings.embed)
    with tempfile.TemporaryDirectory() as tmp:
        docs = sample_docs(Path(tmp))
    print(f"reranker: {args.model}; embedder: {settings.embed.model}\n", flush=True)
    rows = [measure("sample (ops set)", docs, ops_questions(docs), model, encoder)]
    print("\n".join(table(rows, "p", [0.01, 0.05, 0.1, 0.2])), flush=True)
    ldocs, lqs = locomo_set(args.data, args.conversation, args.sample)
    rows.append(measure(f"LoCoMo conv {args.conversation}", ldocs, lqs, model, encoder))
    print("cross-encoder probability (share below each threshold)\n")
    print("\n".join(table(rows, "p", [0.01, 0.05, 0.1, 0.2])))
    print("\nfact cosine\n")
    print("\n".join(table(rows, "c", [0.5, 0.55, 0.6, 0.65])))


if __name__ == "__main__":
    main()
