"""The scaling curve of issue 19: synthetic records shaped like the seed's task database (bench_export's
record: tasks, observations and mistakes over a few dozen projects), exported, indexed and searched at
each size; the smallest sizes also synced into a real stack. What is not run at a size is extrapolated
linearly from the largest size where it ran, and the table says so.

    python -m muninn.evals.lab.bench_scale [--synced 1000] [--offline 10000 100000]

Writes evals/results/scale.md and scale.png.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from muninn.evals import bench_export, bench_guard, bench_stack, lab
from muninn.evals.benchutil import pct

RESULTS = lab.RESULTS
def area(size: int) -> str:
    return f"viking://resources/record{size}"


METRICS = ("export s", "sync s", "search vectors fill s", "keyword index MB", "index build s", "BM25 top 20 p50 ms",
           "search p50 ms, no rerank", "search p50 ms, rerank of 20", "searcher RSS MB", "nightly s")


@dataclass
class Point:
    size: int
    values: dict[str, float] = field(default_factory=dict)
    extrapolated: set[str] = field(default_factory=set)
    loads: list[float] = field(default_factory=list)   # 1-minute load average as each step at this size began
    nights: list[list[dict]] = field(default_factory=list)   # per job, the first night and the next (unchanged)


def _files(out: Path, where: str) -> dict[str, str]:
    return {f"{where}/{p.relative_to(out).as_posix()}": p.read_text() for p in sorted(out.rglob("*.md"))
            if ".muninn-export" not in p.parts}


def offline(root: Path, size: int, rng: random.Random) -> tuple[Point, Path, Path]:
    """Export, keyword index build and BM25 over it: no server needed."""
    from muninn.export import pipeline

    point = Point(size, loads=[os.getloadavg()[0]])
    work = root / f"n{size}"
    work.mkdir()
    db, secrets = bench_export.build_record(work, size, 1000, rng)
    out = work / "out"
    t = time.perf_counter()
    pipeline.run("tasks", db, out, [secrets])
    point.values["export s"] = time.perf_counter() - t
    _index(point, work, _files(out, area(size)).items())
    return point, out, work / "index.sqlite"


def index_only(root: Path, size: int, base_out: Path, base_size: int) -> Point:
    """The keyword index at `size` without exporting that many: the largest exported record's files
    again and again under new URIs, each copy's text marked with its number."""
    point = Point(size, loads=[os.getloadavg()[0]])
    work = root / f"n{size}"
    work.mkdir()
    items = list(_files(base_out, area(base_size)).items())

    def copies():
        for i in range(size):
            uri, text = items[i % len(items)]
            copy = i // len(items)
            yield f"{area(size)}/c{copy}/{uri.rsplit('/', 1)[1]}", f"{text}\ncopy {copy}\n"

    _index(point, work, copies())
    return point


def _index(point: Point, work: Path, files) -> None:
    from muninn.plugins.search import keyword, query

    index = work / "index.sqlite"
    t = time.perf_counter()
    keyword.index_facts(index, files)
    point.values["index build s"] = time.perf_counter() - t
    point.values["keyword index MB"] = sum(p.stat().st_size for p in work.glob("index.sqlite*")) / 1e6
    idx = keyword.KeywordIndex(index)
    times = []
    for q in _queries(20):
        match = query.fts_query(query.analyse(q))
        t = time.perf_counter()
        idx.candidates(match, area(point.size), 20)
        times.append((time.perf_counter() - t) * 1000)
    idx.close()
    point.values["BM25 top 20 p50 ms"] = statistics.median(times)


def _queries(n: int) -> list[str]:
    rng = random.Random(5)
    return [" ".join(rng.sample(bench_stack.WORDS, 3)) for _ in range(n)]


RSS_PROBE = """
import json, sys, psutil
from muninn.core import config
from muninn.plugins.search.pipeline import Searcher
settings = config.load(sys.argv[1])
with Searcher(settings, index=sys.argv[2]) as s:
    for q in json.loads(sys.argv[3]):
        s.search(q, rerank=True)
    print(psutil.Process().memory_info().rss / 1e6)
"""


def synced(point: Point, out: Path, index: Path, settings, cfg: Path, owner) -> None:
    """Sync for real, then search the way a reader does, and run the nightly."""
    from muninn.export.sync import sync
    from muninn.plugins.search import fact_vectors
    from muninn.plugins.search.pipeline import Searcher

    point.loads.append(os.getloadavg()[0])
    t = time.perf_counter()
    owner.ensure_dir(area(point.size))
    sync(owner, out, area(point.size), batch_size=100, manifest_dir=out.parent / "sync")
    point.values["sync s"] = time.perf_counter() - t
    # As the nightly refresh does before anyone searches: no search embeds its candidates at first sight.
    t = time.perf_counter()
    fact_vectors.fill(settings, [index])
    point.values["search vectors fill s"] = time.perf_counter() - t
    qs = _queries(12)
    with Searcher(settings, client=owner, index=index) as searcher:
        for rerank, name in ((False, "search p50 ms, no rerank"), (True, "search p50 ms, rerank of 20")):
            searcher.search("warm up", target=area(point.size), rerank=rerank)
            totals = []
            for q in qs:
                t = time.perf_counter()
                searcher.search(q, target=area(point.size), rerank=rerank)
                totals.append((time.perf_counter() - t) * 1000)
            point.values[name] = pct(totals, 0.5)
    rss = subprocess.run([sys.executable, "-c", RSS_PROBE, str(cfg), str(index), json.dumps(qs[:5])],
                         capture_output=True, text=True, env=os.environ)
    if rss.returncode == 0:
        point.values["searcher RSS MB"] = float(rss.stdout.split()[-1])
    # The nightly as cron runs it, in its own process (evals sits beside nightly, not above it): the first
    # night, then the next with nothing changed (what the leak scan's cache and the incremental walks save).
    for _ in range(2):
        load = os.getloadavg()[0]
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "muninn", "-c", str(cfg), "nightly", "--json"],
                              capture_output=True, text=True, env=os.environ)
        took = time.perf_counter() - t
        try:
            jobs = json.loads(proc.stdout)["jobs"]
        except (ValueError, KeyError):
            jobs = []
        point.nights.append([{"name": r["name"], "status": r["status"], "seconds": r["seconds"],
                              "detail": r["detail"]} for r in jobs]
                            + [{"name": "(whole run)", "status": f"exit {proc.returncode}", "seconds": round(took, 2),
                                "detail": f"load {load:.2f}"}])
        point.values.setdefault("nightly s", took)


def extrapolate(points: list[Point]) -> None:
    """A metric missing at a size takes the largest measured size's value times the ratio of sizes
    (linear); search latency, whose candidates are 20 at every size, is carried over as it is."""
    flat = {"search p50 ms, no rerank", "search p50 ms, rerank of 20", "searcher RSS MB"}
    for metric in METRICS:
        measured = [p for p in points if metric in p.values]
        if not measured:
            continue
        base = max(measured, key=lambda p: p.size)
        for p in points:
            if metric not in p.values:
                factor = 1.0 if metric in flat else p.size / base.size
                p.values[metric] = base.values[metric] * factor
                p.extrapolated.add(metric)


def growth(points: list[Point], metric: str) -> float | None:
    """The exponent b of value ~ size^b between the two largest measured sizes (1: linear)."""
    import math

    measured = sorted((p for p in points if metric not in p.extrapolated and p.values.get(metric, 0) > 0),
                      key=lambda p: p.size)
    if len(measured) < 2:
        return None
    a, b = measured[-2], measured[-1]
    return math.log(b.values[metric] / a.values[metric]) / math.log(b.size / a.size)


def render(points: list[Point], load: tuple[float, float]) -> str:
    head = "| metric | " + " | ".join(f"{p.size:,} facts" for p in points) + " | growth exponent |"
    lines = ["# Scaling curve", "", f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on "
             f"{os.cpu_count()} cores; 1-minute load average {load[0]:.2f} at the start, {load[1]:.2f} at the end. "
             "Values marked * are extrapolated (linear from the largest size where they ran; search latency "
             "and memory carried over, as a search reads 20 candidates at every size). The growth exponent b "
             "fits value ~ size^b between the two largest measured sizes: 1 is linear. The last row is the "
             "1-minute load average as each step at a size began (export and index; then sync, search and "
             "nightly where synced): above ~2, the 2 cores were shared.", "", head,
             "|---" * (len(points) + 2) + "|"]
    for metric in METRICS:
        cells = []
        for p in points:
            v = p.values.get(metric)
            cells.append("-" if v is None else f"{v:,.1f}{'*' if metric in p.extrapolated else ''}")
        b = growth(points, metric)
        lines.append(f"| {metric} | {' | '.join(cells)} | {'-' if b is None else f'{b:.2f}'} |")
    lines.append("| 1-min load average as each step began | "
                 + " | ".join(" / ".join(f"{x:.2f}" for x in p.loads) or "-" for p in points) + " | - |")
    for p in points:
        if len(p.nights) == 2:
            lines += ["", f"## `muninn nightly` per job at {p.size:,} facts", "",
                      "First night, then the next with nothing changed. Seconds from each job's own report.", "",
                      "| job | first night s | status | next night s | status | next night said |",
                      "| --- | ---: | --- | ---: | --- | --- |"]
            second = {r["name"]: r for r in p.nights[1]}
            for r in p.nights[0]:
                n = second.get(r["name"], {})
                lines.append(f"| {r['name']} | {r['seconds']:.2f} | {r['status']} | {n.get('seconds', 0):.2f} | "
                             f"{n.get('status', '-')} | {str(n.get('detail', '')).replace('|', '/')[:120]} |")
    return "\n".join(lines) + "\n"


def plot(points: list[Point], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    sizes = [p.size for p in points]
    for metric in ("export s", "sync s", "index build s", "BM25 top 20 p50 ms", "search p50 ms, rerank of 20"):
        if all(metric in p.values for p in points):
            line, = ax.plot(sizes, [p.values[metric] for p in points], marker="o", label=metric)
            extra = [p for p in points if metric in p.extrapolated]
            ax.plot([p.size for p in extra], [p.values[metric] for p in extra], "o", markerfacecolor="white",
                    color=line.get_color())
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("facts")
    ax.set_ylabel("seconds or milliseconds (see label)")
    ax.set_title("muninn at scale (hollow markers are extrapolated: see scale.md)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    from muninn.core import config, credentials
    from muninn.core.client import OpenViking
    from muninn.plugins.stack import lifecycle

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synced", type=int, nargs="*", default=[1000])
    parser.add_argument("--offline", type=int, nargs="*", default=[10000])
    parser.add_argument("--index-only", type=int, nargs="*", default=[100000],
                        help="sizes where only the keyword index is built and searched (copies of the largest "
                        "exported record)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyrings.alt.file.PlaintextKeyring")
    root = Path(tempfile.mkdtemp(prefix="muninn-scale-"))
    rng = random.Random(13)
    points: list[Point] = []
    prepared = {}
    for n in sorted({*args.synced, *args.offline}):
        point, out, index = offline(root, n, rng)
        points.append(point)
        prepared[n] = (point, out, index)
        print(f"[scale] {n}: {point.values}", file=sys.stderr, flush=True)
    largest = max(prepared)
    for n in sorted(args.index_only):
        points.append(index_only(root, n, prepared[largest][1], largest))
        print(f"[scale] {n} (index only): {points[-1].values}", file=sys.stderr, flush=True)
    if args.synced:
        cfg, _base = bench_guard.stack_config(root)
        os.environ["XDG_DATA_HOME"] = str(root / "xdg")
        os.environ["MUNINN_HOME"] = str(root / "home")
        settings = config.load(cfg)
        lifecycle.up(settings, say=lambda m: None, config_file=cfg)
        try:
            with OpenViking.root(settings) as admin:
                key = admin.create_account("scale", "owner")
            credentials.for_server(settings).set(credentials.user_key_name("scale", "owner"), key)
            data = yaml.safe_load(cfg.read_text())
            data["openviking"] = {"account": "scale", "user": "owner"}
            # The record's known values, as the nightly's leak scan would have them.
            data["export"] = {"secret_files": [str(root / f"n{largest}" / "secrets.yaml")]}
            cfg.write_text(yaml.safe_dump(data))
            settings = config.load(cfg)
            with OpenViking(settings.server.base_url, key, key_name="scale:owner", timeout=600) as owner:
                for n in sorted(args.synced):
                    point, out, index = prepared[n]
                    synced(point, out, index, settings, cfg, owner)
                    print(f"[scale] {n} synced: {point.values}", file=sys.stderr, flush=True)
        finally:
            lifecycle.down(settings, say=lambda m: None)
    points.sort(key=lambda p: p.size)
    extrapolate(points)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "scale.md").write_text(render(points, (load_start, os.getloadavg()[0])))
    plot(points, args.out / "scale.png")
    print((args.out / "scale.md").read_text())


if __name__ == "__main__":
    main()
