"""Benchmark the foundation: `muninn up` cold start, sidecar throughput and latency,
write-to-searchable for 200 and 2,000 one-fact files, and find p50/p95.

Run: `.venv/bin/python -m muninn.evals.bench_stack` (or `make bench`). Starts its own stack in a
temporary workspace on free ports and stops it. Prints a markdown table and writes
evals/results/stack.md. Medians over repeated runs; these machines are noisy.
"""

from __future__ import annotations

import os
import platform
import random
import statistics
import tempfile
import time
from pathlib import Path

import httpx
import yaml

from muninn.core import config, paths
from muninn.core.client import OpenViking
from muninn.evals.benchutil import free_port, pct
from muninn.plugins.stack import lifecycle

WORDS = ("backup restore postgres nginx certificate kubernetes node drain dns resolver vpn tunnel redis "
         "memory grafana alert terraform lock disk volume rotate token deploy rollback incident runbook "
         "latency replica upgrade kernel patch firewall rule ingress").split()


def _fact(i: int, rng: random.Random) -> str:
    words = " ".join(rng.choice(WORDS) for _ in range(25))
    return f"# Fact {i}\nContext: a note from the ops record, number {i}.\n\n{words}.\n"


def main() -> None:
    os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyrings.alt.file.PlaintextKeyring")
    tmp = Path(tempfile.mkdtemp(prefix="muninn-bench-"))
    server_venv = paths.server_venv()  # the shared one: resolve before XDG_DATA_HOME moves
    os.environ["XDG_DATA_HOME"] = str(tmp / "xdg")  # an isolated keyring file
    cfg = tmp / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp / "home"), "server": {"port": free_port(),
                   "venv": str(server_venv)}, "embed": {"port": free_port()}}))
    settings = config.load(cfg)
    rows: list[tuple[str, str]] = []
    rng = random.Random(7)
    load_before = os.getloadavg()[0]

    starts = []
    for _ in range(3):
        t = time.perf_counter()
        lifecycle.up(settings, say=lambda m: None, config_file=cfg)
        starts.append(time.perf_counter() - t)
        lifecycle.down(settings, say=lambda m: None)
    rows.append(("`muninn up` cold start (sidecar + server), median of 3", f"{statistics.median(starts):.1f} s"))
    lifecycle.up(settings, say=lambda m: None, config_file=cfg)
    try:
        url = f"{settings.embed.base_url}/v1/embeddings"
        texts = [" ".join(rng.choice(WORDS) for _ in range(8)) for _ in range(1000)]
        rates = []
        with httpx.Client(timeout=300) as http:
            for _ in range(3):
                t = time.perf_counter()
                for i in range(0, 1000, 100):
                    http.post(url, json={"input": texts[i:i + 100]}).raise_for_status()
                rates.append(1000 / (time.perf_counter() - t))
            single = []
            for q in texts[:50]:
                t = time.perf_counter()
                http.post(url, json={"input": q}).raise_for_status()
                single.append((time.perf_counter() - t) * 1000)
        rows.append(("sidecar embeddings/s, 1,000 short texts in batches of 100 (median of 3)",
                     f"{statistics.median(rates):.0f}/s"))
        rows.append(("sidecar single-query latency p50 / p95 (50 queries)",
                     f"{pct(single, .5):.1f} / {pct(single, .95):.1f} ms"))

        with OpenViking.root(settings) as root:
            for n in (200, 2000):
                account = f"bench{n}"
                key = root.create_account(account, "owner")
                with OpenViking(settings.server.base_url, key, key_name=account) as client:
                    area = "viking://resources/bench"
                    client.ensure_dir(area)
                    files = {f"{area}/f{i:05d}.md": _fact(i, rng) for i in range(n)}
                    t = time.perf_counter()
                    items = list(files.items())
                    for i in range(0, n, 200):
                        client.batch_write(area, dict(items[i:i + 200]), wait=False)
                    client.wait()
                    elapsed = time.perf_counter() - t
                    count = sum(1 for _ in client.walk(area))
                    rows.append((f"write-to-searchable, {n} one-fact files (batches of 200, then wait)",
                                 f"{elapsed:.1f} s ({n / elapsed:.0f} files/s; {count} counted back)"))
                    if n == 2000:
                        lat = []
                        for _ in range(60):
                            q = " ".join(rng.choice(WORDS) for _ in range(5))
                            t = time.perf_counter()
                            client.find(q, area, limit=20)
                            lat.append((time.perf_counter() - t) * 1000)
                        lat = lat[10:]  # warm
                        rows.append(("find top 20 over 2,000 files, p50 / p95 (50 warm queries)",
                                     f"{pct(lat, .5):.0f} / {pct(lat, .95):.0f} ms"))
    finally:
        lifecycle.down(settings, say=lambda m: None)

    machine = (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
               f"openviking {settings.server.version}, embedding model {settings.embed.model} on CPU, threads = cores; "
               f"1-minute load average {load_before:.1f} at the start and {os.getloadavg()[0]:.1f} at the end "
               "(anything above ~2 means other work shared the 2 cores)")
    out = ["# Foundation benchmark", "", f"Machine: {machine}. Run on {time.strftime('%Y-%m-%d')}.", "",
           "| what | result |", "| --- | --- |", *[f"| {a} | {b} |" for a, b in rows], ""]
    text = "\n".join(out)
    print(text)
    target = Path(__file__).resolve().parent / "results" / "stack.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


if __name__ == "__main__":
    main()
