"""`muninn bench [--quick | --smoke]`: every figure issue 19 asks for, measured in one run on one stack of its own,
written to evals/results/benchmarks.md with the machine, the date and the load average beside every
section, and ratios against peers measured in the same run (OpenViking find alone, BM25 alone, a plain
regex redactor).

It reuses the single-purpose benchmarks (bench_guard's stack and reader set-up and paired reads,
bench_export's record, bench_redact's corpus, bench_vault's masking and verify sweep) at sizes that
fit a run: `--smoke` (each section once at the smallest sizes: the test that it runs end to end),
`--quick` (a few minutes on a quiet machine) or the default. Medians throughout; no test asserts a time, the
smoke test only that every section was written.
"""

from __future__ import annotations

import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from muninn.core import config
from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.evals import bench_export, bench_guard, bench_redact, bench_stack, bench_vault
from muninn.evals.benchutil import pct

RESULTS = Path(__file__).resolve().parent / "results" / "benchmarks.md"
SECTIONS = ("Stack", "Fresh CLI", "Write to searchable", "Search by stage", "Batch vs serial",
            "Rerank by candidate count",
            "Rerank levers", "Export and redaction", "Guard overhead", "Masking", "Verify sweep", "Nightly per job")


@dataclass
class Size:
    flag: str           # how the report's title names the run
    rounds: int         # repeats of a paired measurement (batch against serial), and of each redactor pass
    guard_facts: int    # the 220-word notes the readers' areas start with (bench_guard._setup)
    queries: int
    facts: int
    embed_texts: int
    export_rows: int
    known: int
    redact_mb: float
    mask_mb: float
    verify_entries: int
    guard_calls: int
    rerank_runs: int


SMOKE = Size("--smoke", rounds=1, guard_facts=20, queries=2, facts=20, embed_texts=20, export_rows=56, known=50,
             redact_mb=0.1, mask_mb=0.1, verify_entries=4, guard_calls=5, rerank_runs=1)
QUICK = Size("--quick", rounds=3, guard_facts=200, queries=8, facts=100, embed_texts=200, export_rows=560,
             known=1000, redact_mb=2, mask_mb=2, verify_entries=40, guard_calls=50, rerank_runs=3)
FULL = Size("", rounds=3, guard_facts=200, queries=40, facts=1000, embed_texts=1000, export_rows=5600,
            known=10000, redact_mb=20, mask_mb=16, verify_entries=200, guard_calls=300, rerank_runs=10)


@dataclass
class Section:
    title: str
    load: float
    rows: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class Bench:
    size: Size
    tmp: Path
    settings: Settings
    cfg_path: Path
    owner: OpenViking
    account: str
    uris: list[str]
    sections: list[Section] = field(default_factory=list)
    peers: dict[str, float] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)

    @contextmanager
    def section(self, title: str) -> Iterator[list[tuple[str, str]]]:
        assert title in SECTIONS, title
        sec = Section(title, os.getloadavg()[0])
        t = time.perf_counter()
        try:
            yield sec.rows
        finally:
            sec.seconds = time.perf_counter() - t
            self.sections.append(sec)
            print(f"[bench] {title}: {sec.seconds:.1f} s, load {sec.load:.1f}", file=sys.stderr, flush=True)


def ms(values: list[float]) -> str:
    return f"{pct(values, 0.5):.1f} / {pct(values, 0.95):.1f} ms"


def timed_ms(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def queries(n: int) -> list[str]:
    rng = random.Random(3)
    return [" ".join(rng.sample(bench_stack.WORDS, 4)) for _ in range(n)]


# --- sections ---

def embeddings(b: Bench, rows: list[tuple[str, str]]) -> None:
    import httpx

    rng = random.Random(7)
    texts = [" ".join(rng.choice(bench_stack.WORDS) for _ in range(12)) for _ in range(b.size.embed_texts)]
    url = f"{b.settings.embed.base_url}/v1/embeddings"
    with httpx.Client(timeout=300) as http:
        t = time.perf_counter()
        for i in range(0, len(texts), 50):
            http.post(url, json={"input": texts[i:i + 50]}).raise_for_status()
        rate = len(texts) / (time.perf_counter() - t)
        single = [timed_ms(lambda q=q: http.post(url, json={"input": q}).raise_for_status()) for q in texts[:20]]
    rows.append((f"embeddings/s, {len(texts)} short texts in batches of 50", f"{rate:.0f}/s"))
    rows.append(("one query's embedding, p50 / p95 (20)", ms(single)))


def fresh_cli(b: Bench, rows: list[tuple[str, str]]) -> None:
    cfg = yaml.safe_load(b.cfg_path.read_text())
    cfg["openviking"] = {"account": b.account, "user": "owner"}
    cfg.setdefault("search", {}).update({"index": str(b.state["index"]), "serve_idle": 120})
    cfg["search"].pop("rerank", None)   # the default reranker, as a user has it
    path = b.tmp / "cli.yaml"
    path.write_text(yaml.safe_dump(cfg))
    env = {k: v for k, v in os.environ.items() if k != "MUNINN_SEARCH__SERVE_IDLE"}

    def wall(*args: str, **extra: str) -> float:
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "muninn", "-c", str(path), *args], capture_output=True,
                             text=True, env={**env, **extra})
        if out.returncode != 0:
            raise RuntimeError(f"muninn {' '.join(args)} exited {out.returncode}: {out.stderr[-300:]}")
        return time.perf_counter() - t

    runs = 2 * b.size.rounds - 1    # 5 a run, 1 for --smoke
    helps = [wall("--help") for _ in range(runs)]
    rows.append((f"`muninn --help`, fresh process, median of {runs}", f"{statistics.median(helps):.2f} s"))
    qs = queries(1 + runs)
    first = wall("search", qs[0], "--json")
    served = [wall("search", q, "--json") for q in qs[1:]]
    inproc = [wall("search", q, "--json", MUNINN_SEARCH__SERVE_IDLE="0") for q in qs[1:1 + b.size.rounds]]
    warm, cold = statistics.median(served), statistics.median(inproc)
    rows.append(("`muninn search` (rerank of 20), first call: starts `muninn serve`, waits for it", f"{first:.2f} s"))
    rows.append((f"`muninn search` (rerank of 20), fresh process, warm serve answers, median of {len(served)}",
                 f"{warm:.2f} s"))
    rows.append((f"`muninn search` (rerank of 20), fresh process searching in-process, median of {len(inproc)}",
                 f"{cold:.2f} s ({cold / warm:.1f}x the served one)"))
    wall("serve", "--stop")


def write_to_searchable(b: Bench, rows: list[tuple[str, str]]) -> None:
    rng = random.Random(9)
    area = "viking://resources/shared/bench"
    b.owner.ensure_dir(area)
    files = {f"{area}/f{i:05d}.md": bench_stack._fact(i, rng) for i in range(b.size.facts)}
    items = list(files.items())
    t = time.perf_counter()
    for i in range(0, len(items), 100):
        b.owner.batch_write(area, dict(items[i:i + 100]), wait=False)
    b.owner.wait()
    elapsed = time.perf_counter() - t
    rows.append((f"{len(items)} one-fact files written until searchable (batches of 100, then wait)",
                 f"{elapsed:.1f} s ({len(items) / elapsed:.1f} files/s)"))


def build_index(b: Bench) -> None:
    from muninn.plugins.search import keyword

    db = b.tmp / "bench-index.sqlite"
    t = time.perf_counter()
    stats = keyword.build_from_openviking(b.owner, "viking://resources", db)
    b.state["index"] = db
    b.state["index_row"] = (f"keyword index built by walking the server ({stats.indexed} files)",
                            f"{time.perf_counter() - t:.1f} s")


def search_by_stage(b: Bench, rows: list[tuple[str, str]]) -> None:
    from muninn.plugins.search import fact_vectors, keyword, query
    from muninn.plugins.search.pipeline import Searcher

    rows.append(b.state["index_row"])
    qs = queries(b.size.queries)
    target = "viking://resources"
    top = b.settings.search
    find = [timed_ms(lambda q=q: b.owner.find(q, target, limit=top.vector_top)) for q in qs]
    index = keyword.KeywordIndex(b.state["index"])
    # As the pipeline asks it: the query analysed into an FTS5 expression, then its list.
    bm25 = [timed_ms(lambda q=q: index.candidates(query.fts_query(query.analyse(q)), target, top.keyword_top))
            for q in qs]
    index.close()
    b.peers.update(find=pct(find, 0.5), bm25=pct(bm25, 0.5))
    rows.append((f"peer: OpenViking find alone (top {top.vector_top}), p50 / p95", ms(find)))
    rows.append((f"peer: BM25 alone (top {top.keyword_top} from the keyword index), p50 / p95", ms(bm25)))
    # A copy of the index has a vector cache of its own, still empty: every candidate is seen first.
    cold = b.tmp / "bench-index-cold.sqlite"
    shutil.copyfile(b.state["index"], cold)
    with Searcher(b.settings, client=b.owner, index=cold) as searcher:
        searcher.search("warm up the model and the caches", rerank=False)
        first = [timed_ms(lambda q=q: searcher.search(q, rerank=False)) for q in qs]
    rows.append((f"search, no rerank, search vectors not filled (each candidate embedded at first sight), "
                 f"p50 / p95 ({len(qs)} queries)", ms(first)))
    t = time.perf_counter()
    filled = fact_vectors.fill(b.settings, [b.state["index"]])
    rows.append((f"search vectors filled ahead, as the nightly refresh does ({filled.texts} texts)",
                 f"{time.perf_counter() - t:.1f} s ({filled.embedded} embedded)"))
    with Searcher(b.settings, client=b.owner, index=b.state["index"]) as searcher:
        b.state["searcher"] = searcher
        for rerank in (False, True):
            searcher.search("warm up the model and the caches", rerank=rerank)
            stages: dict[str, list[float]] = {}
            total = []
            for q in qs:
                t = time.perf_counter()
                result = searcher.search(q, rerank=rerank)
                total.append((time.perf_counter() - t) * 1000)
                for name, value in result.timings_ms.items():
                    stages.setdefault(name, []).append(value)
            label = "with rerank of 20" if rerank else "no rerank"
            rows.append((f"**search, {label}, p50 / p95** ({len(qs)} queries, warm)",
                         f"**{ms(total)}** ({pct(total, 0.5) / b.peers['find']:.1f}x find, "
                         f"{pct(total, 0.5) / max(b.peers['bm25'], 0.01):.0f}x BM25)"))
            for name, values in stages.items():
                rows.append((f"  stage {name}", ms(values)))
            b.state[f"total_{label}"] = total


def batch_vs_serial(b: Bench, rows: list[tuple[str, str]]) -> None:
    """A batch of questions (`muninn search --batch`) one at a time, then at once (search.batch_workers),
    back to back, a few rounds each: the machine may be loaded by other work, so the two are compared within
    each round. Each way has its own warm Searcher, as `muninn search` and `muninn search --batch` do (a
    batch reranks on one core a question: Searcher.at_once). The rerankers' (query, text) caches are emptied
    before every pass, or each repeat would be free."""
    from muninn.plugins.search import batch
    from muninn.plugins.search.pipeline import Searcher

    n = batch.workers(b.settings.search.batch_workers)
    with Searcher(b.settings, client=b.owner, index=b.state["index"]) as one, \
            Searcher(b.settings, client=b.owner, index=b.state["index"]) as many:
        many.at_once(n)
        _batch_vs_serial(b, rows, one, many, n, batch)


def _batch_vs_serial(b: Bench, rows: list[tuple[str, str]], one: Any, many: Any, n: int, batch: Any) -> None:
    qs = queries(2 * b.size.queries)

    def ranks(searcher: Any, rerank: bool, workers: int) -> tuple[float, list[list[str]]]:
        if (model := searcher.reranker()) is not None:
            model._cache.clear()
        t = time.perf_counter()
        got = list(batch.in_order(lambda q: searcher.search(q, rerank=rerank), qs, workers))
        return time.perf_counter() - t, [[h.uri for h in r.hits] for r in got]

    for rerank in (False, True):
        ranks(one, rerank, 1)   # warm: content and vector caches hold every candidate of these questions
        ranks(many, rerank, n)
        serial, batched, same = [], [], True
        load = os.getloadavg()[0]
        for _ in range(b.size.rounds):
            t1, first = ranks(one, rerank, 1)
            t2, then = ranks(many, rerank, n)
            serial.append(t1)
            batched.append(t2)
            same = same and first == then
        label = "with rerank of 20" if rerank else "no rerank"
        s1, s2 = statistics.median(serial), statistics.median(batched)
        rows.append((f"{len(qs)} questions {label}, one at a time, median of {b.size.rounds} (per question)",
                     f"{s1:.2f} s ({s1 / len(qs) * 1000:.0f} ms)"))
        rows.append((f"the same, {n} at a time (search.batch_workers), median of {b.size.rounds} (per question)",
                     f"{s2:.2f} s ({s2 / len(qs) * 1000:.0f} ms)"))
        rows.append((f"**batch speed-up {label}** (load {load:.1f} at the start; ranks identical: "
                     f"{'yes' if same else 'NO'})", f"**{s1 / s2:.2f}x**"))


def rerank_by_count(b: Bench, rows: list[tuple[str, str]]) -> None:
    from muninn.plugins.search import doc as docmod
    from muninn.plugins.search.pipeline import rerank_text

    model = b.state["searcher"].reranker()
    if model is None:
        rows.append(("reranker", f"none loaded: {b.state['searcher'].rerank_problem}"))
        return
    texts = [rerank_text(docmod.parse(u, b.owner.read(u)), b.settings.ranking.content_chars) for u in b.uris[:40]]
    b.state["rerank_texts"] = texts
    q = queries(1)[0]
    inner = model.inner   # past the (query, text) cache, which would make every repeat free
    inner.rerank(q, texts[:4])
    for n in (5, 10, 20, 40):
        runs = [timed_ms(lambda n=n: inner.rerank(q, texts[:n])) for _ in range(b.size.rerank_runs)]
        rows.append((f"{getattr(model, 'model', model.name)}, {n} candidates of ~{len(texts[0])} chars, p50 / p95",
                     ms(runs)))


def export_and_redaction(b: Bench, rows: list[tuple[str, str]]) -> None:
    from muninn.guards.redact.redactor import Redactor

    root = b.tmp / "export"
    root.mkdir()
    rng = random.Random(11)
    rows += bench_export.bench_export(root, b.size.export_rows, b.size.known, rng)
    ids = bench_redact.known_values(b.size.known, rng)
    known = list(ids)
    docs = bench_redact.corpus(b.size.redact_mb, known, rng)
    mb = sum(len(d) for d in docs) / 1e6
    values = Redactor(ids, patterns=False)
    full = Redactor(ids)
    # The peer: what a plain script would do, one regex alternation of the values, longest first.
    plain = re.compile("|".join(re.escape(v) for v in sorted(known, key=len, reverse=True)))
    rates = {}
    for name, fn in (("muninn value pass (Aho-Corasick)", lambda: [values.redact(d) for d in docs]),
                     ("muninn values + patterns (what export runs)", lambda: [full.redact(d) for d in docs]),
                     ("peer: plain regex alternation of the values", lambda: [plain.sub("x", d) for d in docs])):
        seconds = statistics.median(timed_ms(fn) for _ in range(b.size.rounds)) / 1000
        rates[name] = mb / seconds
    peer = rates["peer: plain regex alternation of the values"]
    for name, rate in rates.items():
        ratio = "" if name.startswith("peer") else f" ({rate / peer:.1f}x the regex peer)"
        rows.append((f"{name}, {mb:.1f} MB, {len(known):,} values", f"{rate:.1f} MB/s{ratio}"))


def guard_overhead(b: Bench, rows: list[tuple[str, str]]) -> None:
    from muninn.plugins.mcp.session import GuardSession

    session = GuardSession.open(b.settings, "raven")
    with OpenViking.user(b.settings, b.account, "raven") as direct:
        for uri in b.uris[:10]:
            direct.read(uri)
        d, g, added = bench_guard.paired_reads(session, direct, b.uris, b.size.guard_calls)
    session.close()
    rows.append((f"recall_read direct, {len(d)} calls", ms(d)))
    rows.append(("recall_read guarded in process", ms(g)))
    rows.append(("**added by the guard** (paired difference)", f"**{ms(added)}**"))


def masking(b: Bench, rows: list[tuple[str, str]]) -> None:
    for r in bench_vault.bench_masking(b.size.mask_mb):
        rows.append((f"{r['mode']}, {r['encodings']} ({r['needles']} needles), {r['mb']:.1f} MB",
                     f"{r['mb_s']:.1f} MB/s (values leaked: {r['leaked']})"))


def verify_sweep(b: Bench, rows: list[tuple[str, str]]) -> None:
    for r in bench_vault.bench_verify(b.size.verify_entries, [8]):
        rows.append((f"{r['entries']} entries ({r['serial']} global-state), parallel {r['parallel']}, "
                     "fake kubectl answering in 50 ms", f"{r['seconds']:.2f} s ({r['ok']} ok)"))


def nightly(b: Bench, rows: list[tuple[str, str]]) -> None:
    # As cron runs it, in its own process (evals sits beside nightly, not above it); each job's seconds
    # come from the report.
    import json

    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "muninn", "-c", str(b.cfg_path), "nightly", "--json"],
                         capture_output=True, text=True, env=os.environ)
    total = time.perf_counter() - t
    if not out.stdout.strip():
        rows.append(("`muninn nightly`", f"no report (exit {out.returncode}): {out.stderr.strip()[-200:]}"))
        return
    for job in json.loads(out.stdout)["jobs"]:
        rows.append((f"job {job['name']}", f"{job['seconds']:.2f} s ({job['status']})"))
    rows.append(("`muninn nightly --json`, the whole process", f"{total:.1f} s (exit {out.returncode})"))


# --- the run ---

def run(size: Size, out: Path = RESULTS, levers: Callable[[Bench, list[tuple[str, str]]], None] | None = None,
        sections: Sequence[str] = ()) -> Path:
    """`sections`: only these (and what they need); empty: every section."""
    from muninn.plugins.stack import lifecycle

    os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyrings.alt.file.PlaintextKeyring")
    tmp = Path(tempfile.mkdtemp(prefix="muninn-bench-"))
    cfg_path, base = bench_guard.stack_config(tmp)   # resolves the shared server venv before XDG moves
    os.environ["XDG_DATA_HOME"] = str(tmp / "xdg")
    os.environ["MUNINN_HOME"] = str(tmp / "home")
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_start = os.getloadavg()
    settings = config.load(cfg_path)
    t = time.perf_counter()
    lifecycle.up(settings, say=lambda m: None, config_file=cfg_path)
    stack_s = time.perf_counter() - t
    try:
        cfg_path, uris, account = bench_guard._setup(tmp, (cfg_path, base), facts=size.guard_facts)
        settings = config.load(cfg_path)
        settings = settings.model_copy(update={"openviking": settings.openviking.model_copy(
            update={"account": account, "user": "owner"})})
        from muninn.core import credentials

        key = credentials.for_server(settings).get(credentials.user_key_name(account, "owner"))
        with OpenViking(settings.server.base_url, key or "", key_name=f"{account}:owner",
                        timeout=settings.server.timeout) as owner:
            b = Bench(size, tmp, settings, cfg_path, owner, account, uris)

            def stack_rows(b: Bench, rows: list[tuple[str, str]]) -> None:
                rows.append(("`muninn up` (sidecar + server) in a new workspace", f"{stack_s:.1f} s"))
                embeddings(b, rows)

            def lever_rows(b: Bench, rows: list[tuple[str, str]]) -> None:
                if levers is not None:
                    levers(b, rows)
                else:
                    rows.append(("levers", "not measured in this run"))

            def fresh_rows(b: Bench, rows: list[tuple[str, str]]) -> None:
                b.state["searcher"] = None
                fresh_cli(b, rows)

            # In report order. The searches need the written files and the index whichever run;
            # the rerank sections reuse the searcher "Search by stage" warmed.
            plan: list[tuple[str, Callable[[Bench, list[tuple[str, str]]], None]]] = [
                ("Stack", stack_rows), ("Write to searchable", write_to_searchable),
                ("Search by stage", search_by_stage), ("Batch vs serial", batch_vs_serial),
                ("Rerank by candidate count", rerank_by_count), ("Rerank levers", lever_rows),
                ("Fresh CLI", fresh_rows), ("Export and redaction", export_and_redaction),
                ("Guard overhead", guard_overhead), ("Masking", masking), ("Verify sweep", verify_sweep),
                ("Nightly per job", nightly)]
            needed = set(sections or SECTIONS) | {"Write to searchable"}
            if needed & {"Rerank by candidate count", "Rerank levers"}:
                needed.add("Search by stage")
            for title, measure in plan:
                if title not in needed:
                    continue
                with b.section(title) as rows:
                    measure(b, rows)
                if title == "Write to searchable":
                    build_index(b)
    finally:
        lifecycle.down(settings, say=lambda m: None)
    text = render(b, started, load_start)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return out


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.machine()) if Path("/proc/cpuinfo").exists() else ""
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def render(b: Bench, started: str, load_start: tuple[float, float, float]) -> str:
    order = sorted(b.sections, key=lambda s: SECTIONS.index(s.title))
    lines = ["# Benchmarks (`muninn bench" + (f" {b.size.flag}" if b.size.flag else "") + "`)", "",
             f"Machine: {machine()}. Started {started}; load average (1/5/15 min) at the start "
             f"{load_start[0]:.2f} / {load_start[1]:.2f} / {load_start[2]:.2f}, at the end "
             f"{os.getloadavg()[0]:.2f}. Every section gives the 1-minute load average when it began: above ~2 "
             "the 2 cores were shared with other work, and wall times are pessimistic. Times are medians (p50) "
             "and p95 over the runs stated; ratios compare with peers measured in this same run.", ""]
    for sec in order:
        lines += [f"## {sec.title}", "", f"Load average at the start: {sec.load:.2f}; section took "
                  f"{sec.seconds:.0f} s.", "", "| what | result |", "| --- | --- |",
                  *[f"| {a} | {v} |" for a, v in sec.rows], ""]
    return "\n".join(lines)
