"""Measure the undeclared-secret detector: cases caught per class, identifiers kept, and every false
redaction on ordinary text, listed to be judged.

Run: `.venv/bin/python -m muninn.evals.lab.bench_undeclared [--debs DIR]`. Writes
evals/results/security_undeclared.md.

- Cases: evals/lab/undeclared_cases.py, generated per class (no secrets file: nothing declared). Caught =
  the secret is gone from what export writes (`Redactor.for_facts({})`); also shown: detect-secrets'
  default plugins alone on the same lines, and the leak gate's own reading before and after redaction
  (after must be 0: the gate never flags what the redactor left).
- Ordinary text: the three Debian manuals of the harness (debian-handbook, postgresql-doc-15 converted
  as evals/corpora does; nginx-doc's text files), the prose set of evals/bench_security_export.py,
  dpkg's `*.md5sums` and pip `RECORD` files. Every detector finding there is a false redaction and is
  listed with file, line, class and the text (public documentation: nothing secret is printed);
  leak-gate findings on the redacted text are drops and are counted.
- Speed: the detector's p50 per file on the manuals (the MCP scrubber runs it on whole files).
"""

from __future__ import annotations

import argparse
import glob
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from muninn.evals import lab
from muninn.evals.lab.bench_security_export import PROSE_FILES
from muninn.evals.lab.corpora import docbook
from muninn.evals.lab.corpora.sources import HANDBOOK_CHAPTERS, POSTGRES_PAGES
from muninn.evals.lab.undeclared_cases import CLASSES, cases, survivors
from muninn.guards.gate import gate_undeclared
from muninn.guards.gate.leak_gate import LeakGate
from muninn.guards.redact.patterns import ds_findings
from muninn.guards.redact.redactor import Redactor
from muninn.guards.undeclared import detect as undeclared

ROOT = lab.REPO
RESULTS = ROOT / "evals" / "results" / "security_undeclared.md"
PACKAGES = ("debian-handbook", "postgresql-doc-15", "nginx-doc")


def fetch_debs(where: Path) -> Path:
    """The three packages unpacked under `where/tree` (downloaded once with apt-get)."""
    tree = where / "tree"
    if (tree / "usr/share/doc/postgresql-doc-15").is_dir():
        return tree
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["apt-get", "download", *PACKAGES], cwd=where, check=True, capture_output=True)
    for deb in where.glob("*.deb"):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(tree)], check=True)
    return tree


def manual_texts(tree: Path, work: Path) -> dict[str, list[tuple[str, str]]]:
    """{manual: [(file, text)]}: the handbook and PostgreSQL pages as the harness converts them."""
    out: dict[str, list[tuple[str, str]]] = {}
    for name, html, pages, chapters in (
            ("debian-handbook", "usr/share/doc/debian-handbook/html/en-US", None, HANDBOOK_CHAPTERS),
            ("postgresql-doc-15", "usr/share/doc/postgresql-doc-15/html", POSTGRES_PAGES, None)):
        files = docbook.convert(tree / html, work / name, pages, chapters)
        out[name] = [(f"{name}/{p.relative_to(work / name)}", p.read_text()) for p in files]
    nginx = sorted(p for p in (tree / "usr/share/doc/nginx").rglob("*") if p.is_file())
    out["nginx-doc"] = [(f"nginx/{p.relative_to(tree / 'usr/share/doc/nginx')}", p.read_text(errors="replace"))
                        for p in nginx]
    return out


def digest_texts() -> dict[str, list[tuple[str, str]]]:
    md5 = sorted(glob.glob("/var/lib/dpkg/info/*.md5sums"))
    record = sorted({*glob.glob("/usr/lib/python3*/**/*.dist-info/RECORD", recursive=True),
                     *glob.glob("/usr/local/lib/python3*/**/*.dist-info/RECORD", recursive=True),
                     *glob.glob(str(Path(sys.prefix) / "lib/python3*/site-packages/*.dist-info/RECORD")),
                     *glob.glob(str(Path(sys.base_prefix) / "lib/python3*/site-packages/*.dist-info/RECORD"))})
    return {"dpkg md5sums": [(p, Path(p).read_text(errors="replace")) for p in md5],
            "pip RECORD": [(p, Path(p).read_text(errors="replace")) for p in record]}


def class_rows() -> tuple[list[tuple], int, list[str]]:
    export = Redactor.for_facts({})
    rows = []
    disagree: list[str] = []
    by = {c: [(t, s) for cls, t, s in cases() if cls == c] for c in CLASSES}
    for cls, items in by.items():
        caught = ds = gate_raw = gate_left = 0
        for text, secret in items:
            out = export.redact(text).text
            caught += secret not in out
            ds += any(secret in found or found in secret for line in text.splitlines()
                      for _, found in ds_findings(line))
            gate_raw += bool(gate_undeclared.scan_lines(text))
            left = gate_undeclared.scan_lines(out)
            gate_left += bool(left)
            if left:
                disagree.append(f"{cls}: {text[:60]!r}")
        rows.append((cls, len(items), caught, ds, gate_raw, gate_left))
    kept = sum(x in export.redact(t).text for _, t, x in survivors())
    return rows, kept, disagree


def ordinary_rows(texts: dict[str, list[tuple[str, str]]]) -> tuple[list[tuple], list[str], list[float]]:
    export = Redactor.for_facts({})
    gate = LeakGate({})
    rows, listed, times = [], [], []
    listed_drops: list[str] = []
    for corpus, files in texts.items():
        size = sum(len(t) for _, t in files)
        found = 0
        drops: Counter[str] = Counter()
        by_class: Counter[str] = Counter()
        for name, text in files:
            start = time.perf_counter()
            hits = undeclared.find(text)
            times.append(time.perf_counter() - start)
            found += len(hits)
            for h in hits:
                by_class[h.why] += 1
                line = text.count("\n", 0, h.start) + 1
                listed.append(f"| {corpus} | `{name}:{line}` | {h.why} | `{text[h.start:h.end][:60]}` |")
            reasons = {f.reason for f in gate.scan(export.redact(text).text)}
            drops.update(reasons or ())
            if reasons:
                listed_drops.append(f"| {corpus} | `{name}` | {', '.join(sorted(reasons))} |")
        rows.append((corpus, len(files), size, found, dict(by_class), dict(drops)))
    return rows, [*listed, "", "Files the leak gate would drop after redaction (by its reason):", "",
                  "| text | file | reasons |", "|---|---|---|", *listed_drops], times


def export_cost(facts: int = 1500, values: int = 10_000) -> list[str]:
    """Export of the synthetic task record of evals/bench_export.py (1,500 facts, 10,000 known values)
    with the guards as now and with the detector left out, alternated twice; best run each."""
    import random
    from dataclasses import replace

    from muninn.evals.bench_export import build_record
    from muninn.export import pipeline, sources
    from muninn.guards.known import secret_values
    from muninn.guards.redact.patterns import PatternScanner
    from muninn.guards.rules import all_rules

    root = Path(tempfile.mkdtemp(prefix="muninn-undeclared-cost-"))
    db, secrets = build_record(root, facts, values, random.Random(11))
    known = secret_values.collect([secrets])
    now = pipeline.Guards.from_known(known)
    without = replace(now, redactor=Redactor.for_facts(known, scanner=PatternScanner(
        [r for r in all_rules().values() if r.name != undeclared.RULE])))
    runs: dict[str, list[float]] = {"without": [], "now": []}
    for name, guards in (("without", without), ("now", now)) * 2:
        shutil.rmtree(root / "out", ignore_errors=True)
        start = time.perf_counter()
        report = pipeline.write_facts("tasks", db, sources.build("tasks", db, None).facts(), root / "out", guards)
        runs[name].append(report.facts / (time.perf_counter() - start))
    shutil.rmtree(root, ignore_errors=True)
    return ["| guards | export + redaction + gate |", "|---|---:|",
            f"| without the undeclared-secret detector | {max(runs['without']):.0f} facts/s |",
            f"| with it (as shipped) | {max(runs['now']):.0f} facts/s |"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--debs", type=Path, default=Path(tempfile.gettempdir()) / "muninn-undeclared-debs")
    args = parser.parse_args()
    rows, kept, disagree = class_rows()
    work = Path(tempfile.mkdtemp())
    try:
        texts = manual_texts(fetch_debs(args.debs), work)
        texts["prose set"] = [(str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p), p.read_text(errors="replace"))
                              for p in PROSE_FILES if p.is_file()]
        texts.update(digest_texts())
        ordinary, listed, times = ordinary_rows(texts)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    manual_times = sorted(times)
    cost = export_cost()
    lines = ["# Undeclared secrets (issue #31)", "",
             "Written by `evals/lab/bench_undeclared.py`. No secrets file: every case is undeclared. *Caught*: gone",
             "from what export writes. *detect-secrets*: its default plugins alone find the secret on its line.",
             "*gate before*: the leak gate's own reading flags the raw case; *gate after*: flags the redacted",
             "text (must be 0: the two readings agree).", "",
             "| class | cases | caught | detect-secrets | gate before | gate after |", "|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {c} | {n} | {k} ({k / n:.0%}) | {d} | {g} | {a} |" for c, n, k, d, g, a in rows]
    total = sum(r[1] for r in rows)
    lines += [f"| **all** | {total} | {sum(r[2] for r in rows)} | {sum(r[3] for r in rows)} | "
              f"{sum(r[4] for r in rows)} | {sum(r[5] for r in rows)} |", "",
              f"Identifiers that must survive (UUIDs, SHAs, sha256 sums, image digests, ARNs, pod names, GPG "
              f"fingerprints, versions, ssh keys, certificates, RECORD and SRI digests, hostnames, paths, IPFS ids): "
              f"**{kept} of {len(survivors())} kept**.", ""]
    if disagree:
        lines += ["Gate findings left after redaction:", "", *[f"- {d}" for d in disagree], ""]
    lines += ["## False redactions on ordinary text", "",
              "| text | files | characters | detector findings | by class | leak-gate drops |",
              "|---|---:|---:|---:|---|---:|"]
    lines += [f"| {c} | {f} | {s:,} | {n} | {', '.join(f'{k} {v}' for k, v in sorted(b.items())) or '-'} | "
              f"{', '.join(f'{k} {v}' for k, v in sorted(d.items())) or 0} |" for c, f, s, n, b, d in ordinary]
    lines += ["", f"Detector time per file over these {len(manual_times)} files: p50 "
              f"{statistics.median(manual_times) * 1000:.2f} ms, p90 "
              f"{manual_times[int(len(manual_times) * 0.9)] * 1000:.2f} ms, max {manual_times[-1] * 1000:.1f} ms.", "",
              "## Cost in export", "",
              "Synthetic task record of `evals/bench_export.py`, 1,500 facts, 10,000 known values; best of two "
              "runs each, alternated, on the shared 2-core machine.", "", *cost, "",
              "Every finding on that text, to be judged (the text is public documentation):", "",
              "| text | where | class | redacted |", "|---|---|---|---|", *listed, ""]
    RESULTS.write_text("\n".join(lines))
    print("\n".join(lines[:40]))


if __name__ == "__main__":
    main()
