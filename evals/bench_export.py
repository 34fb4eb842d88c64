"""Benchmark export (+ redaction + leak gate) and sync into OpenViking until searchable.

Run: `.venv/bin/python -m muninn.evals.bench_export [--sizes 5600 50000] [--sync 5600] [--known 10000]`.
Prints a markdown table and writes evals/results/export.md.

The record is synthetic but shaped like the seed's (5,587 entries of tasks, observations and
mistakes over a few dozen projects): a SQLite task database with 200–900 characters per row,
~1 % of rows holding a known secret value and ~0.5 % a labelled secret. Redaction runs with
`--known` known values (default 10,000) in a secrets YAML. Sync starts its own stack on free
ports in a temporary workspace, writes through `muninn.export.sync.sync` (batches, wait, walk
and count), then asks `find` for planted facts.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sqlite3
import string
import tempfile
import time
from pathlib import Path

import yaml

from muninn.evals.benchutil import free_port
from muninn.export import pipeline

WORDS = ("backup restore postgres nginx certificate kubernetes node drain dns resolver vpn tunnel redis memory "
         "grafana alert terraform lock disk volume rotate deploy rollback incident runbook latency replica "
         "upgrade kernel patch firewall rule ingress proxmox zfs pool snapshot restic cron job failed after "
         "the because when we then it was is on in for with to of and check fixed moved switched to").split()
PROJECTS = [f"project-{i:02d}" for i in range(40)]


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def _token(rng: random.Random, n: int = 24) -> str:
    alphabet = string.ascii_letters + string.digits
    while True:
        v = "".join(rng.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in v) and any(c.isalpha() for c in v):
            return v


def build_record(root: Path, rows: int, known: int, rng: random.Random) -> tuple[Path, Path]:
    values = [_token(rng, rng.randint(16, 32)) for _ in range(known)]
    secrets = root / "secrets.yaml"
    secrets.write_text(yaml.safe_dump([{"id": f"s{i:05d}", "service": "svc", "value": v}
                                       for i, v in enumerate(values)]))
    db = root / f"record-{rows}.db"
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TABLE projects (id INTEGER PRIMARY KEY, name TEXT, description TEXT);
        CREATE TABLE tasks (id INTEGER PRIMARY KEY, project_id INTEGER, title TEXT, description TEXT,
                            status TEXT, updated_at TEXT, tags TEXT);
        CREATE TABLE observations (id INTEGER PRIMARY KEY, project_id INTEGER, text TEXT, created_at TEXT,
                                   tags TEXT);
        CREATE TABLE mistakes (id INTEGER PRIMARY KEY, project_id INTEGER, title TEXT, what_happened TEXT,
                               lesson TEXT, created_at TEXT, tags TEXT);
    """)
    con.executemany("INSERT INTO projects VALUES (?,?,?)",
                    [(i, p, _sentence(rng, 8)) for i, p in enumerate(PROJECTS)])

    def body() -> str:
        text = " ".join(_sentence(rng, rng.randint(6, 18)) for _ in range(rng.randint(2, 8)))
        roll = rng.random()
        if roll < 0.01:
            text += f" The old key was {rng.choice(values)} until the rotation."
        elif roll < 0.015:
            text += f" API key: {_token(rng, 28)}"
        return text

    for i in range(rows):
        date = f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        project = rng.randrange(len(PROJECTS))
        kind = i % 10
        if kind < 6:
            con.execute("INSERT INTO tasks VALUES (?,?,?,?,?,?,?)",
                        (i, project, _sentence(rng, 6), body(), rng.choice(["done", "planned"]), date, "ops,lab"))
        elif kind < 9:
            con.execute("INSERT INTO observations VALUES (?,?,?,?,?)", (i, project, body(), date, "note"))
        else:
            con.execute("INSERT INTO mistakes VALUES (?,?,?,?,?,?,?)",
                        (i, project, _sentence(rng, 6), body(), _sentence(rng, 10), date, "lesson"))
    con.commit()
    con.close()
    return db, secrets


def bench_export(root: Path, rows: int, known: int, rng: random.Random) -> list[tuple[str, str]]:
    db, secrets = build_record(root, rows, known, rng)
    out = root / f"out-{rows}"
    t = time.perf_counter()
    pipeline.Guards.from_files([secrets])
    load = time.perf_counter() - t
    t = time.perf_counter()
    report = pipeline.run("tasks", db, out, [secrets])
    cold = time.perf_counter() - t
    size = sum(p.stat().st_size for p in out.rglob("*.md")) / 1e6
    t = time.perf_counter()
    again = pipeline.run("tasks", db, out, [secrets])
    warm = time.perf_counter() - t
    return [
        (f"export + redaction + gate, {rows:,} facts, {known:,} known values (cold, empty out dir)",
         f"{cold:.1f} s ({report.facts / cold:,.0f} facts/s, {size:.1f} MB written, {size / cold:.1f} MB/s; "
         f"redacted {report.redacted}, "
         f"dropped {len(report.dropped)})"),
        (f"of which: load {known:,} known values from secrets YAML and build redactor + gate",
         f"{load:.1f} s (measured separately)"),
        (f"rerun, {rows:,} facts, nothing changed", f"{warm:.1f} s ({again.unchanged:,} unchanged, "
         f"{again.written} written)"),
    ]


def bench_sync(root: Path, out: Path, batch: int) -> list[tuple[str, str]]:
    from muninn.core import config, paths
    from muninn.core.client import OpenViking
    from muninn.export.sync import remote_files, sync
    from muninn.plugins.stack import lifecycle

    # The shared server venv (~1.3 GB, minutes to build) is resolved before XDG_DATA_HOME moves to
    # the isolated keyring folder; resolving it after would build a fresh venv in the temp dir.
    venv = paths.server_venv()
    os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyrings.alt.file.PlaintextKeyring")
    os.environ["XDG_DATA_HOME"] = str(root / "xdg")
    cfg = root / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(root / "home"), "server": {"port": free_port(),
                   "venv": str(venv)}, "embed": {"port": free_port()}}))
    settings = config.load(cfg)
    lifecycle.up(settings, say=lambda m: None, config_file=cfg)
    rows = []
    try:
        with OpenViking.root(settings) as admin:
            key = admin.create_account("benchsync", "owner")
        with OpenViking(settings.server.base_url, key, key_name="benchsync", timeout=600) as client:
            area = "viking://resources/record"
            n = len([p for p in out.rglob("*.md") if ".muninn-export" not in p.parts])
            t = time.perf_counter()
            report = sync(client, out, area, batch_size=batch, manifest_dir=root / "sync")
            elapsed = time.perf_counter() - t
            counted = len(remote_files(client, area))
            rows.append((f"sync {n:,} facts until searchable (batches of {batch}, wait, walk and count)",
                         f"{elapsed:.0f} s ({report.written / elapsed:.1f} files/s; missing after wait "
                         f"{report.missing_after_wait}; {counted:,} counted back)"))
            # Synthetic text is word salad, so a semantic probe proves nothing; what is measured is
            # that the facts answer right after sync: find returns hits from the area, and grep
            # finds a fact by its unique id line.
            probes = sorted(out.rglob("task-*.md"))[:: max(1, n // 20)][:20]
            found = grepped = 0
            for p in probes:
                fact_id = p.read_text().split("\nid: ", 1)[1].splitlines()[0]
                found += bool(client.find(p.read_text()[-300:], target_uri=area, limit=10))
                hits = client.grep(area, f"id: {fact_id}$", case_insensitive=False)
                grepped += [h["uri"] for h in hits] == [f"{area}/{p.relative_to(out).as_posix()}"]
            rows.append(("right after sync: queries with hits from the area / facts found by grep on their id",
                         f"{found}/{len(probes)} / {grepped}/{len(probes)}"))
            t = time.perf_counter()
            again = sync(client, out, area, batch_size=batch, manifest_dir=root / "sync")
            rows.append((f"sync rerun, {n:,} facts unchanged", f"{time.perf_counter() - t:.1f} s "
                         f"({again.unchanged:,} unchanged, {again.written} written)"))
    finally:
        lifecycle.down(settings, say=lambda m: None)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[5600, 50000])
    parser.add_argument("--known", type=int, default=10000)
    parser.add_argument("--sync", type=int, default=5600, help="facts to sync (0: skip the server part)")
    parser.add_argument("--batch", type=int, default=100)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="muninn-bench-export-"))
    rng = random.Random(11)
    rows: list[tuple[str, str]] = []
    for n in args.sizes:
        rows += bench_export(root, n, args.known, rng)
        print(*(f"| {a} | {b} |" for a, b in rows[-3:]), sep="\n", flush=True)
    if args.sync:
        sync_root = root / "sync-run"
        sync_root.mkdir()
        db, secrets = build_record(sync_root, args.sync, args.known, rng)
        pipeline.run("tasks", db, sync_root / "out", [secrets])
        rows += bench_sync(sync_root, sync_root / "out", args.batch)
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    text = "\n".join(["# Export and sync benchmark", "",
                      f"Machine: {machine}. Run on {time.strftime('%Y-%m-%d')}. Command: "
                      f"`python -m muninn.evals.bench_export --sizes {' '.join(map(str, args.sizes))} "
                      f"--known {args.known} --sync {args.sync} --batch {args.batch}`.", "",
                      "| what | result |", "| --- | --- |", *[f"| {a} | {b} |" for a, b in rows], ""])
    print(text)
    target = Path(__file__).resolve().parent / "results" / "export.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


if __name__ == "__main__":
    main()
