"""Plain retrievers over the exported facts and over whole sections, offline (issue 48, step 1).

    python -m muninn.evals.lab.corpora.section_lab OUT.json [--corpora ...] [--models ...] [--max-tokens 512]
    python -m muninn.evals.lab.corpora.section_lab --table OUT.json ...

A section is every exported part of one heading (the exporter cuts a long section into parts of ~1,200
characters, `.../part-N.md`, which share the section's key). Per corpus and model:
- BM25 and dense over the facts (the parts, as muninn exports them; a part never exceeds 1,200 words);
- BM25 and dense over whole sections (breadcrumb + every part's body; the embedder reads its first
  `max_tokens`), the snippet of a long one being its first window;
- dense with sections found by their best passage: windows of ~120 words of the section under its
  breadcrumb, each embedded, max-pooled to the section; k distinct sections; the snippet is the best window.

A hit counts the way a reader meets it: the unit if it is at most 1,200 words, else its snippet must hold
the answer (questions with files/expect gold have no answer text: the unit alone decides). Embeddings are
cached by text hash under the corpora cache, so a rerun (another model list) only embeds what is new.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from muninn.core import embed_prompts as prompts_mod
from muninn.core.config import EmbedSettings
from muninn.evals.lab.corpora import baselines, harness, sources
from muninn.evals.lab.corpora.questions import Question, norm
from muninn.plugins.embed.model import embed, load
from muninn.plugins.search import windows as window_texts

CORPORA = ["debian-handbook", "postgresql", "debian-reference", "apache-httpd", "locomo-30", "ops"]
WINDOW_CHARS = 720          # ~120 words
LONG_WORDS = 1200           # a unit longer than this is met by its snippet
KS = (1, 4, 10)
_PART = re.compile(r"/part-\d+\.md$")
_PART_LABEL = re.compile(r" \(part \d+/\d+\)$")


@dataclass
class Sec:
    key: str
    crumb: str
    parts: list[harness.Section] = field(default_factory=list)

    @property
    def body(self) -> str:
        return "\n\n".join(p.body for p in self.parts)

    @property
    def text(self) -> str:
        return f"{self.crumb}\n{self.body}"

    def windows(self) -> list[str]:
        return window_texts.windows(self.body, WINDOW_CHARS)


def section_key(uri: str) -> str:
    return _PART.sub(".md", uri)


def group(facts: list[harness.Section]) -> list[Sec]:
    out: dict[str, Sec] = {}
    for f in facts:
        crumb = _PART_LABEL.sub("", f.text.split("\n", 1)[0])
        out.setdefault(section_key(f.uri), Sec(section_key(f.uri), crumb)).parts.append(f)
    return list(out.values())


def words(text: str) -> int:
    return len(text.split())


class Cache:
    """Vectors by (model, max_tokens, side, text) hash, kept on disk between runs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, np.ndarray] = {}
        if path.exists():
            with np.load(path) as z:
                self.data = {k: z[k] for k in z.files}

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, **self.data)
        tmp.replace(self.path)


class Model:
    def __init__(self, name: str, max_tokens: int, cache_dir: Path) -> None:
        cfg = baselines.settings_for(name, EmbedSettings()).model_copy(update={"max_tokens": max_tokens})
        self.name = name if max_tokens == 256 else f"{name}@{max_tokens}"
        self.encoder, _ = load(cfg)
        self.prompts = prompts_mod.for_settings(cfg)
        self.cache = Cache(cache_dir / f"{self.name}.npz")

    def _vecs(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        keys = [hashlib.sha1((prefix + t).encode()).hexdigest() for t in texts]
        todo = list({k: t for k, t in zip(keys, texts, strict=True) if k not in self.cache.data}.items())
        if todo:
            vecs = embed(self.encoder, [t for _, t in todo], prefix, batch_size=baselines.BATCH)
            for (k, _), v in zip(todo, vecs, strict=True):
                self.cache.data[k] = v
        return np.stack([self.cache.data[k] for k in keys]) if keys else np.zeros((0, 1), np.float32)

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._vecs(texts, self.prompts.passage)

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._vecs(texts, self.prompts.query)


@dataclass
class Ranked:
    """One question's top units: which gold they are, and whether the reader sees the answer in each."""

    units: list[str]
    seen: list[bool]


Retriever = Callable[[int], Ranked]   # question index -> ranking


def first_hit(r: Ranked, gold: set[str]) -> int | None:
    return next((i for i, (u, s) in enumerate(zip(r.units, r.seen, strict=True)) if u in gold and s), None)


def visible(q: Question, unit_text: str, snippet: str) -> bool:
    if q.answer is None or words(unit_text) <= LONG_WORDS:
        return True
    return norm(q.answer) in norm(snippet)


def evaluate(name: str, built: sources.Built, models: Sequence[Model]) -> dict[str, dict]:
    facts = harness.sections(built, "viking://resources/lab")
    secs = group(facts)
    qs = built.questions.questions
    fact_gold = [harness.gold(q, facts) for q in qs]
    sec_gold = [{section_key(u) for u in g} | ({s.key for s in secs if norm(q.answer) in norm(s.body)}
                                                if q.answer else set()) for q, g in zip(qs, fact_gold, strict=True)]
    sec_windows = [s.windows() for s in secs]
    win_owner = [i for i, ws in enumerate(sec_windows) for _ in ws]
    win_texts = [f"{secs[i].crumb}\n\n{w}" for i, ws in enumerate(sec_windows) for w in ws]
    long_secs = sum(1 for s in secs if words(s.body) > LONG_WORDS)
    print(f"{name}: {len(facts)} facts, {len(secs)} sections ({long_secs} over {LONG_WORDS} words), "
          f"{len(win_texts)} windows", flush=True)
    runs: dict[str, tuple[list[Ranked], str]] = {}
    K = max(KS)

    def fact_rank(order: np.ndarray) -> Ranked:
        top = [facts[int(i)] for i in order[:K]]
        return Ranked([f.uri for f in top], [True] * len(top))   # a part is short: read whole

    def sec_rank(order: np.ndarray, snippet: Callable[[int], str], qi: int) -> Ranked:
        top = [int(i) for i in order[:K]]
        return Ranked([secs[i].key for i in top], [visible(qs[qi], secs[i].body, snippet(i)) for i in top])

    bm_f = baselines.Bm25([f.text for f in facts])
    bm_s = baselines.Bm25([s.text for s in secs])
    runs["BM25 facts"] = ([fact_rank(np.array(bm_f.rank(q.question, K))) for q in qs], "fact")
    runs["BM25 sections"] = ([sec_rank(np.array(bm_s.rank(q.question, K)), lambda i: sec_windows[i][0], qi)
                              for qi, q in enumerate(qs)], "section")
    for m in models:
        qv = m.queries([q.question for q in qs])
        fv = m.passages([f.text for f in facts])
        sv = m.passages([s.text for s in secs])
        wv = m.passages(win_texts)
        m.cache.save()
        runs[f"dense {m.name} facts"] = ([fact_rank(np.argsort(-(fv @ v), kind="stable")) for v in qv], "fact")
        runs[f"dense {m.name} sections"] = (
            [sec_rank(np.argsort(-(sv @ v), kind="stable"), lambda i: sec_windows[i][0], qi)
             for qi, v in enumerate(qv)], "section")
        owner = np.array(win_owner)
        best_rows = []
        for qi, v in enumerate(qv):
            ws = wv @ v
            best = np.full(len(secs), -np.inf, np.float32)
            np.maximum.at(best, owner, ws)
            arg = {}
            for wi in np.argsort(-ws, kind="stable"):
                arg.setdefault(int(owner[wi]), int(wi))
            offset = np.cumsum([0, *(len(w) for w in sec_windows)])
            best_rows.append(sec_rank(np.argsort(-best, kind="stable"),
                                      lambda i, a=arg, o=offset: sec_windows[i][a[i] - o[i]], qi))
        runs[f"dense {m.name} best passage"] = (best_rows, "section")
    out: dict[str, dict] = {}
    for run, (rows, unit) in runs.items():
        gold = fact_gold if unit == "fact" else sec_gold
        firsts = [first_hit(r, g) for r, g in zip(rows, gold, strict=True)]
        kinds: dict[str, list[int | None]] = {}
        for q, f in zip(qs, firsts, strict=True):
            kinds.setdefault(q.label or q.kind, []).append(f)
        out[run] = {"n": len(qs), **{f"hit@{k}": sum(1 for f in firsts if f is not None and f < k) for k in KS},
                    "by_kind": {kd: {"n": len(v), "hit@4": sum(1 for f in v if f is not None and f < 4),
                                     "hit@10": sum(1 for f in v if f is not None and f < 10)}
                                for kd, v in sorted(kinds.items())},
                    "firsts": {q.id: f for q, f in zip(qs, firsts, strict=True)}}
    out["_shape"] = {"facts": len(facts), "sections": len(secs), "long_sections": long_secs,
                     "sections_over_1000_words": sum(1 for s in secs if words(s.body) > 1000),
                     "windows": len(win_texts), "words": sum(words(s.body) for s in secs)}
    return out


def table(paths: Sequence[Path]) -> str:
    """Markdown: per corpus, each retriever's hit@4 / hit@10 (of n), and the kinds' hit@4."""
    merged: dict[str, dict] = {}
    for p in paths:
        for corpus, runs in json.loads(p.read_text()).items():
            merged.setdefault(corpus, {}).update(runs)
    lines = ["| corpus | retriever | hit@1 | hit@4 | hit@10 | hit@4 by kind |", "| --- | --- | --- | --- | --- | --- |"]
    for corpus, runs in merged.items():
        for run, r in runs.items():
            if run.startswith("_"):
                continue
            kinds = ", ".join(f"{k} {v['hit@4']}/{v['n']}" for k, v in r["by_kind"].items())
            n = r["n"]
            lines.append(f"| {corpus} | {run} | {r['hit@1']} | {r['hit@4']}/{n} | {r['hit@10']}/{n} | {kinds} |")
    lines += ["", "| corpus | facts | sections | over 1,000 words | over 1,200 words | passages | words |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for corpus, runs in merged.items():
        if (sh := runs.get("_shape")):
            lines.append(f"| {corpus} | {sh['facts']} | {sh['sections']} | {sh['sections_over_1000_words']} | "
                         f"{sh['long_sections']} | {sh['windows']} | {sh['words']} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, nargs="+", help="the result file; with --table, the files to tabulate")
    ap.add_argument("--table", action="store_true", help="print the markdown table of the result files")
    ap.add_argument("--corpora", nargs="+", default=CORPORA)
    ap.add_argument("--models", nargs="*", default=["e5-small-v2", "MiniLM-L6", "bge-small"],
                    help="none: BM25 and the corpora's shape alone")
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--cache", type=Path, default=None,
                    help="a corpora cache of your own (build rewrites its trees; link its debs/ to the shared one)")
    args = ap.parse_args()
    if args.table:
        print(table(args.out))
        return
    args.out = args.out[0]
    cache = args.cache or sources.cache_dir()
    result = json.loads(args.out.read_text()) if args.out.exists() else {}
    built = {name: sources.build(name, cache) for name in args.corpora}
    if not args.models:
        for name, b in built.items():
            result.setdefault(name, {}).update(evaluate(name, b, []))
            args.out.write_text(json.dumps(result, indent=1))
    for mname in args.models:
        model = Model(mname, args.max_tokens, cache / "section_lab")
        for name, b in built.items():
            got = evaluate(name, b, [model])
            corpus = result.setdefault(name, {})
            corpus.update(got)
            args.out.write_text(json.dumps(result, indent=1))
        del model


if __name__ == "__main__":
    main()
