"""Benchmark redaction and the leak gate: MB/s with 10,000 known values over ~50 MB of notes.

Run: `.venv/bin/python -m muninn.evals.bench_redact [--mb 50] [--runs 3]`. Prints a markdown
table and writes evals/results/redact.md. Medians over `--runs` runs; the machine is shared.

The corpus is synthetic ops notes (headings, prose, tables, commands, host names, versions,
UUIDs, code blocks, labelled hints) in ~4 KB documents, the size of a rendered fact file, with
one known value planted every ~20 KB and one labelled pattern secret every ~40 KB. Rows:
- value pass alone, on one 50 MB string and per document;
- value + pattern pass per document (what the exporter runs), with and without the per-line
  trigger that keeps detect-secrets off lines that cannot match (the slow path runs on a
  1 MB sample: it is too slow for 50 MB);
- the leak gate per document (known values + its own patterns).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import string
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

from muninn.guards.gate.leak_gate import LeakGate
from muninn.guards.redact.patterns import PatternScanner, triggered_lines
from muninn.guards.redact.redactor import ENCODINGS, Redactor

RESULTS = Path(__file__).parent / "results" / "redact.md"
ALNUM = string.ascii_letters + string.digits
WORDS = ("backup restore postgres nginx certificate kubernetes node drain dns resolver vpn tunnel redis "
         "memory grafana alert terraform lock disk volume rotate deploy rollback incident runbook latency "
         "replica upgrade kernel patch firewall rule ingress the a of to and in is for on with after before "
         "we it was not check run then when if should must team owner").split()


def _token(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(ALNUM) for _ in range(n - 2)) + rng.choice(string.digits) + rng.choice("abcxyz")


def known_values(n: int, rng: random.Random) -> dict[str, str]:
    return {_token(rng, rng.randint(12, 48)): f"bench-secret-{i:05d}" for i in range(n)}


def _line(rng: random.Random) -> str:
    kind = rng.random()
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18)))
    if kind < 0.45:
        return words.capitalize() + "."
    if kind < 0.55:
        return f"## {words[:40].title()}"
    if kind < 0.65:
        return f"| web-{rng.randint(1, 99):02d}.prod.example.com | 10.0.{rng.randint(0, 255)}.{rng.randint(1, 254)} " \
               f"| v{rng.randint(1, 3)}.{rng.randint(0, 20)}.{rng.randint(0, 9)} |"
    if kind < 0.72:
        return f"kubectl --context ops-{rng.randint(1, 9)} -n payments get pods -l app=api-{rng.randint(1, 50)}"
    if kind < 0.78:
        return f"See INC-{rng.randint(1000, 99999)} and request {rng.getrandbits(128):032x}"[:80]
    if kind < 0.84:
        return f"/var/log/app/{rng.choice(WORDS)}-{rng.randint(2020, 2026)}-{rng.randint(1, 12):02d}.log rotated"
    if kind < 0.90:
        return f"password: see vault entry {rng.choice(WORDS)}-{rng.choice(['prod', 'staging'])}"
    if kind < 0.95:
        return f'    retries = {rng.randint(1, 9)}  # {words[:30]}'
    return "```"


def corpus(mb: float, known: list[str], rng: random.Random, doc_size: int = 4096) -> list[str]:
    docs: list[str] = []
    total = 0
    target = int(mb * 1_000_000)
    since_value = since_pattern = 0
    while total < target:
        lines: list[str] = []
        size = 0
        while size < doc_size:
            line = _line(rng)
            if since_value > 20_000:
                line += f" {rng.choice(known)}"
                since_value = 0
            if since_pattern > 40_000:
                line = f"API key: {_token(rng, 24)}"
                since_pattern = 0
            lines.append(line)
            size += len(line) + 1
            since_value += len(line) + 1
            since_pattern += len(line) + 1
        doc = "\n".join(lines) + "\n"
        docs.append(doc)
        total += len(doc)
    return docs


def timed(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    """Median wall seconds and median CPU seconds of this process. Other people's servers and
    tests share these 2 cores, so CPU time is the steadier of the two."""
    wall, cpu = [], []
    for _ in range(runs):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return statistics.median(wall), statistics.median(cpu)


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"ahocorasick-rs {version('ahocorasick-rs')}, detect-secrets {version('detect-secrets')}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=50.0, help="corpus size in MB")
    ap.add_argument("--runs", type=int, default=3, help="runs per row (the median is reported)")
    ap.add_argument("--values", type=int, default=10_000, help="known values")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()

    rng = random.Random(42)
    known = known_values(args.values, rng)
    t = time.perf_counter()
    docs = corpus(args.mb, list(known), rng)
    build_corpus = time.perf_counter() - t
    big = "".join(docs)
    mb = len(big.encode()) / 1e6
    sample = docs[: max(1, int(len(docs) / mb))]   # ~1 MB
    sample_mb = sum(len(d) for d in sample) / 1e6

    t = time.perf_counter()
    values_only = Redactor(known, patterns=False)
    build_values = time.perf_counter() - t
    t = time.perf_counter()
    encoded = Redactor(known, patterns=False, encodings=ENCODINGS)
    build_encoded = time.perf_counter() - t
    full = Redactor(known)
    slow = Redactor(known, scanner=PatternScanner(prefilter=False))
    t = time.perf_counter()
    gate = LeakGate(known)
    build_gate = time.perf_counter() - t

    hits = len(values_only.redact(big).hits)
    triggered = sum(len(triggered_lines(d)) for d in docs)
    total_lines = sum(d.count("\n") for d in docs)
    rows: list[tuple[str, str, str, str]] = []
    load_before = os.getloadavg()[0]

    def row(name: str, size_mb: float, seconds: tuple[float, float], note: str = "") -> None:
        wall, cpu = seconds
        rows.append((name, f"{size_mb / wall:.1f}", f"{size_mb / cpu:.1f}",
                     note or f"{wall:.2f} s wall for {size_mb:.1f} MB"))
        print(f"{name}: {size_mb / wall:.1f} MB/s wall, {size_mb / cpu:.1f} MB/s CPU", flush=True)

    row(f"value pass, one {mb:.0f} MB string", mb, timed(lambda: values_only.redact(big), args.runs),
        f"{hits} values replaced")
    row("value pass, per 4 KB document", mb, timed(lambda: [values_only.redact(d) for d in docs], args.runs))
    row(f"value pass with base64 + URL forms ({len(encoded):,} needles), per document", mb,
        timed(lambda: [encoded.redact(d) for d in docs], args.runs))
    row("value + pattern pass (trigger on), per document", mb,
        timed(lambda: [full.redact(d) for d in docs], args.runs))
    row("value + pattern pass (trigger off), 1 MB sample", sample_mb,
        timed(lambda: [slow.redact(d) for d in sample], args.runs))
    row("leak gate (known values + patterns), per document", mb,
        timed(lambda: [gate.scan(d) for d in docs], args.runs))
    row("contains_known (gate helper on the redactor), per document", mb,
        timed(lambda: [values_only.contains_known(d) for d in docs], args.runs))

    lines = [
        "# Redaction and leak-gate throughput",
        "",
        f"Machine: {machine()}.",
        f"Corpus: {mb:.1f} MB of synthetic ops notes in {len(docs)} documents (~4 KB each), "
        f"{args.values:,} known values (12–48 characters); medians of {args.runs} runs.",
        f"Set-up: value automaton {build_values:.2f} s (with encoded forms {build_encoded:.2f} s), "
        f"gate automaton {build_gate:.2f} s, "
        f"corpus generation {build_corpus:.1f} s (not timed below).",
        "",
        f"Load average (1 min) before / after: {load_before:.1f} / {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores, so wall-clock rows are pessimistic; the CPU column is this process's CPU time.",
        "",
        "| what | MB/s (wall) | MB/s (CPU) | note |",
        "| --- | ---: | ---: | --- |",
        *[f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows],
        "",
        "Target: ≥ 50 MB/s for the value pass. Run: `.venv/bin/python -m muninn.evals.bench_redact`.",
        "",
        "## Why the pattern pass is slower, and what was done",
        "",
        "detect-secrets scans line by line in Python: 26 plugins, each `analyze_line` with its own",
        "regexes and heuristic filters, ~30–110 µs per line (KeywordDetector alone ~50 µs on a line",
        "holding a keyword). Run on every line that is the `trigger off` row. `guards/redact/patterns.py` first",
        "finds, per line, what a plugin needs in order to fire (one Aho-Corasick pass over the lower-cased",
        "text for literals such as `key`, `://`, `ghp_`; five small regexes for shapes without a literal)",
        f"and runs only those plugins on those lines: {triggered:,} of {total_lines:,} lines here "
        f"({100 * triggered / max(total_lines, 1):.1f} %), mostly `password: see vault …` lines. On",
        "markdown, every KeywordDetector regex needs a quote character, so a keyword line without one",
        "skips that plugin (the most expensive one); muninn's `labelled-secret` rule covers unquoted",
        "`password: v`. The tests check on the planted corpus and on one sample line per plugin that",
        "this finds exactly the spans of the full scan, and that every plugin has a trigger.",
        "",
        "muninn's own rules start with a literal, because Python's `re` skips ahead only to a leading",
        "literal or character set: the AWS key-id pattern ran at ~28 MB/s with a leading `\\b` and ~900",
        "MB/s without it (the boundary is now checked in code). Case-insensitive rules run over the",
        "lower-cased text instead of with IGNORECASE (9.5 → 46 MB/s for the label alternation), and one",
        "Aho-Corasick pass over the rules' trigger words decides which rules run at all.",
    ]
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
