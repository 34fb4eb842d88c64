"""What the vector stage reads, measured offline: dense retrieval over a corpus's rendered fact files,
embedded (a) whole, as OpenViking stores them with `embed.fact_text` off, and (b) through
`factfile.embed_text`, as the sidecar now hands them to the model; beside the plain dense baseline
(breadcrumb + body). Same model, same 256-token cut as the sidecar, in-process, no server.

    python -m muninn.evals.lab.corpora.vector_lab debian-handbook postgresql locomo-26 [--cache DIR]
    python -m muninn.evals.lab.corpora.vector_lab ops --model DIR --pooling mean \
        --query-prefix "query: " --passage-prefix "passage: "      # another model: e5 as its card says

It ranks files one vector each, the way `find` does before muninn's fusion; it is the vector stage's
own ceiling, not the product's result (that is `corpora run`). It also prints the model's size on disk
and how many texts a second it embeds (one process, the sidecar's threads).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from muninn.core import factfile
from muninn.core.config import EmbedSettings
from muninn.core.embed_prompts import Prompts
from muninn.evals.lab.corpora import harness, sources
from muninn.evals.lab.corpora.window_lab import fact_texts
from muninn.export import pipeline as export_pipeline
from muninn.plugins.embed.model import disk_size, embed, load, model_path

RULES = {
    "whole file (fact_text off)": lambda text, crumb_body: text,
    "embed_text (fact_text on)": lambda text, crumb_body: factfile.embed_text(text),
    "dense baseline": lambda text, crumb_body: crumb_body,
}


def rendered_facts(built: sources.Built) -> list[tuple[harness.Section, str]]:
    """(the section as the harness judges it, the rendered file text) for every fact the exporter writes."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for s in built.sources:
            dest = Path(tmp) / (s.name or s.kind)
            export_pipeline.run(s.kind, s.path, dest, options=s.options or None)
            for path in sorted(dest.rglob("*.md")):
                text = path.read_text(encoding="utf-8")
                ff = factfile.parse(text)
                crumb = factfile.CRUMB.join(ff.breadcrumb) or ff.title
                uri = f"{s.area}/{path.relative_to(Path(tmp)).as_posix()}"
                out.append((harness.Section(uri=uri, text=f"{crumb}\n{ff.body}", body=ff.body,
                                            source_path=ff.source_path, title=ff.title), text))
    return out


def window_rule(chars: int) -> Callable[[str, str], list[str]]:
    """Several vectors a fact: its paragraphs packed into windows of `chars` characters, each led by the
    breadcrumb (window_lab.fact_texts); the fact ranks by its best window."""
    return lambda text, crumb_body: fact_texts(text, chars)


def run(name: str, cache: Path | None, model: Any, options: dict | None = None, prompts: Prompts = Prompts(),
        rules: list[str] | None = None, windows: list[int] = ()) -> dict[str, dict[str, float]]:
    """hit@1/4/10 and MRR of each rule, plus its embedding throughput (`texts/s`)."""
    built = sources.build(name, cache, options)
    facts = rendered_facts(built)
    secs = [sec for sec, _ in facts]
    questions = built.questions.questions
    qvecs = embed(model, [q.question for q in questions], prompts.query)
    measured = {rule: (lambda t, c, rule=rule: [RULES[rule](t, c)]) for rule in rules or list(RULES)}
    measured |= {f"best window of {n} characters": window_rule(n) for n in windows}
    out = {}
    for rule, texts_of in measured.items():
        per_fact = [texts_of(text, sec.text) for sec, text in facts]
        owner = np.repeat(np.arange(len(per_fact)), [len(t) for t in per_fact])
        start = time.perf_counter()
        mat = embed(model, [t for ts in per_fact for t in ts], prompts.passage)
        rate = len(owner) / (time.perf_counter() - start)
        sims = np.full((len(questions), len(facts)), -np.inf)
        np.maximum.at(sims.T, owner, (qvecs @ mat.T).T)     # a fact's score: its best text's
        order = np.argsort(-sims, axis=1, kind="stable")[:, :10]
        firsts = [harness.first_rank([secs[i].uri for i in row], harness.gold(q, secs)) for q, row in zip(
            questions, order, strict=True)]
        out[rule] = {**harness.metrics(firsts, []), "texts/s": rate, "texts": len(owner)}
    print(f"\n{name}: {len(facts)} facts, {len(questions)} questions")
    print("| text embedded | texts | hit@1 | hit@4 | hit@10 | MRR@10 | texts/s |\n" + "| --- " * 7 + "|")
    for rule, m in out.items():
        print(f"| {rule} | {m['texts']} | {m['hit@1']:.3f} | {m['hit@4']:.3f} | {m['hit@10']:.3f} | {m['MRR']:.3f} "
              f"| {m['texts/s']:.1f} |", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m muninn.evals.lab.corpora.vector_lab",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("corpora", nargs="+")
    ap.add_argument("--cache", type=Path)
    ap.add_argument("--model", default=EmbedSettings().model, help="an embed.model value (a packaged id or a local "
                    "folder: sentence-transformers, or model.onnx + tokenizer.json)")
    ap.add_argument("--pooling", choices=["cls", "mean"], default=EmbedSettings().pooling,
                    help="pooling of a local ONNX folder (its card says which; packaged ids know their own)")
    ap.add_argument("--query-prefix", default="", help='put before every question, as the model\'s card says '
                    '(e5: "query: ")')
    ap.add_argument("--passage-prefix", default="", help='put before every embedded text (e5: "passage: ")')
    ap.add_argument("--rule", action="append", choices=list(RULES), help="measure only these texts (default: all)")
    ap.add_argument("--windows", type=int, nargs="*", default=[], metavar="CHARS",
                    help="also rank each fact by its best window of CHARS characters (several vectors a fact)")
    ap.add_argument("--max-tokens", type=int, default=EmbedSettings().max_tokens, help="the sidecar's cut")
    ap.add_argument("--option", action="append", default=[], metavar="KIND.OPTION=VALUE",
                    help="an exporter option for every source of that kind, e.g. notes.max_chars=800")
    args = ap.parse_args(argv)
    options = sources.parse_options(args.option)
    settings = EmbedSettings(model=args.model, pooling=args.pooling, max_tokens=args.max_tokens)
    model, dim = load(settings)
    prompts = Prompts(query=args.query_prefix, passage=args.passage_prefix)
    size = disk_size(model_path(settings)) / 2**20
    print(f"model {args.model} ({type(model).__name__}, {dim} dimensions, {size:.0f} MiB on disk), "
          f"{args.max_tokens} tokens, prompts {prompts}")
    for name in args.corpora:
        run(name, args.cache, model, options, prompts, args.rule, args.windows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
