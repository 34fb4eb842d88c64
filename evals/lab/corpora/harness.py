"""The corpora harness: every corpus through the product's own path, and the plain baselines.

Per corpus: its source tree is exported by the product's exporter (`muninn export all` with a
`sources:` entry per source) and synced (`muninn sync all`, whose after-sync hook fills the keyword
index) into its own area of a fresh account, then every question goes through the product's
Searcher in each stage variant. The baselines (plain dense with each installable embedder, and BM25)
rank the same exported sections (breadcrumb + body, from the same Fact objects the exporter renders) with
no muninn wrapping.

A question's gold is the set of fact URIs its answer picks out (questions.py). A question with no
gold (the exporter cut its answer in two) stops the run: scoring it as a miss would blame search.
"""

from __future__ import annotations

import datetime as dt
import statistics
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from muninn.core.client import OpenViking
from muninn.core.config import Settings, SourceSettings
from muninn.core.errors import ExitCode, MuninnError, ServerError
from muninn.evals.lab.corpora import baselines, trace
from muninn.evals.lab.corpora.questions import Question, norm
from muninn.evals.lab.corpora.sources import Built
from muninn.export import pipeline, sync
from muninn.export import sources as export_sources
from muninn.export.facts import CRUMB, unique_paths
from muninn.plugins.search import query as query_mod
from muninn.plugins.search.doc import file_key
from muninn.plugins.search.pipeline import Searcher

ROOT = "viking://resources/corpora"
K = 10
# name -> Searcher.search switches. "keyword only" is the product's BM25 stage on its own (below).
VARIANTS: dict[str, dict[str, bool] | None] = {
    "defaults": {},
    "--no-rerank": {"rerank": False},
    "--no-hybrid": {"hybrid": False},
    "vectors only": {"hybrid": False, "rerank": False, "routing": False, "recency": False, "dates": False},
    "keyword only": None,
}
Say = Callable[[str], None]


class GoldMissing(MuninnError):
    """A question's answer is in no exported fact: the exporter split it, or the question is stale."""

    exit_code = ExitCode.BAD_INPUT


@dataclass(frozen=True)
class Section:
    uri: str
    text: str          # breadcrumb + body: what the baselines read
    body: str
    source_path: str
    title: str
    file: str = ""     # the key the product's cap of hits a file reads (doc.file_key)


@dataclass
class CorpusRun:
    name: str
    origin: str
    facts: int
    questions: int
    seconds: dict[str, float] = field(default_factory=dict)
    variants: dict[str, dict[str, float]] = field(default_factory=dict)
    by_kind: dict[str, dict[str, float]] = field(default_factory=dict)    # variant -> kind -> hit@4
    ranks: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def sections(built: Built, root: str) -> list[Section]:
    """The facts the exporter writes, with the URI each lands at after sync."""
    out = []
    for s in built.sources:
        source = export_sources.build(s.kind, s.path, s.options or None)
        for f in unique_paths(source.facts()):
            crumb = CRUMB.join(f.breadcrumb) if f.breadcrumb else f.title
            uri = f"{root}/{s.area}/{s.name or s.kind}/{f.path}.md"
            out.append(Section(uri=uri, text=f"{crumb}\n{f.body}", body=f.body, source_path=f.source_path,
                               title=f.title, file=file_key(uri, f.source, f.id, f.source_path)))
    return out


def gold(q: Question, secs: list[Section]) -> set[str]:
    if q.answer is not None:
        want = norm(q.answer)
        return {s.uri for s in secs if want in norm(s.body)}
    if q.files is not None:
        files = set(q.files)
        return {s.uri for s in secs if s.source_path in files}
    assert q.expect is not None
    return {s.uri for s in secs if any(e in f"{s.uri} {s.source_path} {s.title}" for e in q.expect)}


def first_rank(uris: list[str], want: set[str]) -> int | None:
    """0-based rank of the first right URI, None when none is in the list."""
    return next((i for i, u in enumerate(uris) if u in want), None)


def metrics(firsts: list[int | None], ms: list[float]) -> dict[str, float]:
    n = max(len(firsts), 1)
    hit = {k: sum(1 for f in firsts if f is not None and f < k) / n for k in (1, 4, 10)}
    mrr = sum(1 / (f + 1) for f in firsts if f is not None and f < K) / n
    return {"hit@1": hit[1], "hit@4": hit[4], "hit@10": hit[10], "MRR": mrr, "n": len(firsts),
            "p50_ms": statistics.median(ms) if ms else 0.0}


def corpus_settings(settings: Settings, built: Built, root: str, workdir: Path) -> Settings:
    """The run's settings: this corpus's sources into areas below `root`, its own export folder and
    keyword index; everything else (search weights included) exactly as configured."""
    srcs = [SourceSettings(kind=s.kind, path=s.path, area=f"{root}/{s.area}", name=s.name, options=s.options)
            for s in built.sources]
    return settings.model_copy(update={
        "sources": srcs,
        # Small batches: a 100-file batch written with wait=True outlasts the client's 60 s timeout
        # while the server embeds ~1 file/s on 2 busy cores. Same files, same path, more calls.
        "export": settings.export.model_copy(update={"out": workdir / "exports",
                                                     "batch_size": min(settings.export.batch_size, 10)}),
        "search": settings.search.model_copy(update={"index": workdir / "keyword.sqlite"}),
    })


def export_and_sync(settings: Settings, client: OpenViking, say: Say = print, tries: int = 4) -> dict[str, Any]:
    reports = pipeline.run_all(settings)
    dropped = [d for r in reports.values() for d in r.dropped]
    for attempt in range(1, tries + 1):
        try:
            synced = sync.sync_all(client, settings)
            break
        except ServerError as exc:
            # A batch can outlast the client timeout while the server embeds on busy cores. Sync
            # converges on rerun (its manifest keeps what was confirmed), so rerun it as a user would.
            if attempt == tries or not any(w in str(exc) for w in ("timed out", "busy")):
                raise
            say(f"sync attempt {attempt}: {exc}; waiting for indexing, then rerunning sync (it resumes)")
            client.wait()      # the timed-out batch is still indexing: a write now would be refused as busy
    missing = sum(r.missing_after_wait for r in synced.values())
    return {"facts": sum(r.facts for r in reports.values()), "dropped": len(dropped), "missing": missing,
            "written": sum(r.written for r in synced.values())}


def keyword_only(searcher: Searcher, text: str, target: str, k: int) -> list[str]:
    """The product's keyword stage alone: the same query analysis and FTS index the pipeline uses."""
    if searcher.index is None:
        return []
    match = query_mod.fts_query(query_mod.analyse(text))
    return [c.uri for c in searcher.index.candidates(match, target, k)]


def baseline_names(models: Sequence[str]) -> list[str]:
    return [*(baselines.dense_name(m) for m in models), baselines.BM25_NAME]


def run_corpus(settings: Settings, name: str, built: Built, client: OpenViking, workdir: Path,
               say: Say = print, variants: list[str] | None = None, trace_dir: Path | None = None,
               dense_models: Sequence[str] = baselines.DEFAULT_MODELS) -> CorpusRun:
    root = f"{ROOT}/{uuid.uuid4().hex[:6]}"
    secs = sections(built, root)
    qs = built.questions.questions
    golds = [gold(q, secs) for q in qs]
    if lost := [q.id for q, g in zip(qs, golds, strict=True) if not g]:
        raise GoldMissing(f"{name}: no exported fact holds the answer of {', '.join(lost)}",
                          fix="the exporter cut the answer at a split: shorten the answer to one sentence")
    run = CorpusRun(name=name, origin=built.origin, facts=len(secs), questions=len(qs))
    cfg = corpus_settings(settings, built, root, workdir / name)
    t0 = time.perf_counter()
    say(f"{name}: exporting and syncing {len(secs)} facts")
    stats = export_and_sync(cfg, client, say)
    run.seconds["export+sync"] = round(time.perf_counter() - t0, 1)
    if stats["missing"] or stats["dropped"]:
        run.warnings.append(f"export/sync: {stats}")
    now = dt.datetime.fromisoformat(built.now) if built.now else None
    target = f"{root}"
    per: dict[str, tuple[list[int | None], list[float]]] = {}
    chosen = variants or list(VARIANTS)
    with Searcher(cfg, client=client) as searcher:
        for variant in chosen:
            flags = VARIANTS[variant]
            firsts, ms = [], []
            weak = 0    # the "no strong match" advisory is counted, not repeated per question
            say(f"{name}: {variant}")
            t0 = time.perf_counter()
            for q, want in zip(qs, golds, strict=True):
                t = time.perf_counter()
                if flags is None:
                    uris = keyword_only(searcher, q.question, target, K)
                else:
                    result = searcher.search(q.question, k=K, target=target, now=now, **flags)
                    uris = [h.uri for h in result.hits]
                    for w in result.warnings:
                        if w.startswith("no strong match"):
                            weak += 1
                        elif w not in run.warnings:
                            run.warnings.append(w)
                ms.append((time.perf_counter() - t) * 1000)
                firsts.append(first_rank(uris, want))
            if weak:
                run.warnings.append(f"{variant}: no strong match (search.strong_match) on {weak} of {len(qs)} q")
            run.seconds[variant] = round(time.perf_counter() - t0, 1)
            per[variant] = (firsts, ms)
        if trace_dir is not None:
            say(f"{name}: trace")
            records = []
            for q, want in zip(qs, golds, strict=True):
                rec = trace.question(searcher, q.question, target, now)
                records.append({"id": q.id, "kind": q.label or q.kind, "gold": sorted(want), **rec})
            trace.write(trace_dir / f"{name}.jsonl", records)
    texts = [s.text for s in secs]
    uris_of = [s.uri for s in secs]
    def plain() -> Iterator[baselines.Dense | baselines.Bm25]:
        # One embedder in memory at a time: each is loaded, ranks every question, and is dropped.
        for model in dense_models:
            say(f"{name}: embedding {len(texts)} sections with {model}")
            yield baselines.Dense.load(model, settings.embed, texts)
        yield baselines.Bm25(texts)

    for model in plain():
        say(f"{name}: {model.name}")
        firsts, ms = [], []
        for q, want in zip(qs, golds, strict=True):
            t = time.perf_counter()
            ranked = [uris_of[i] for i in model.rank(q.question, K)]
            ms.append((time.perf_counter() - t) * 1000)
            firsts.append(first_rank(ranked, want))
        per[model.name] = (firsts, ms)
        del model       # before the next one loads
    for variant, (firsts, ms) in per.items():
        run.variants[variant] = metrics(firsts, ms)
        kinds: dict[str, list[int | None]] = {}
        for q, f in zip(qs, firsts, strict=True):
            kinds.setdefault(q.label or q.kind, []).append(f)
        run.by_kind[variant] = {k: round(metrics(v, [])["hit@4"], 3) for k, v in sorted(kinds.items())}
        run.ranks += [{"variant": variant, "id": q.id, "kind": q.label or q.kind, "first": f}
                      for q, f in zip(qs, firsts, strict=True)]
    return run


def run(settings: Settings, corpora: dict[str, Built], workdir: Path, say: Say = print,
        variants: list[str] | None = None, trace_dir: Path | None = None,
        on_done: Callable[[list[CorpusRun]], None] | None = None,
        dense_models: Sequence[str] = baselines.DEFAULT_MODELS) -> list[CorpusRun]:
    """Every corpus into its own area of one fresh account (the stack must be up: `muninn up`).
    `on_done` hears the runs so far after each corpus: a long run leaves its results as it goes.
    `dense_models`: a plain dense baseline with each (baselines.MODELS' short names, or embed.model values)."""
    baselines.check(dense_models, settings.embed)
    root = OpenViking.root(settings)
    account = f"corpora{uuid.uuid4().hex[:8]}"
    try:
        key = root.create_account(account, "owner")
    finally:
        root.close()
    runs: list[CorpusRun] = []
    with OpenViking(settings.server.base_url, key, key_name=account) as client:
        for name, built in corpora.items():
            runs.append(run_corpus(settings, name, built, client, workdir, say, variants, trace_dir, dense_models))
            if on_done:
                on_done(runs)
    return runs
