"""Concurrency cost of the MCP server: N real stdio MCP clients at once, each spawning its own
`muninn mcp --profile P` (as every agent session does), each making searches; per-search latency
p50/p95 across all clients, and the resident memory of each MCP server process.

    python -m muninn.evals.lab.bench_mcp_clients --config muninn.yaml --profile owner --clients 1 2 4 8

Each client's first search (the reranker's load) is timed apart as `first`; the rest are `warm`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

import anyio
import psutil
from mcp import Client, StdioServerParameters

QUESTIONS = ["how did we rotate the certificate", "why did the jira api return 403", "what broke the backups",
             "how is the vpn set up", "which dashboards show disk usage", "how do we restart the ingress",
             "who owns the on-call rota", "what happened during the dns outage"]


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def _mcp_rss(config: str) -> dict[int, int]:
    out = {}
    for p in psutil.process_iter(["pid", "cmdline", "memory_info"]):
        cmd = " ".join(p.info["cmdline"] or [])
        if " mcp --profile " in cmd and config in cmd and p.info["memory_info"]:
            out[p.info["pid"]] = p.info["memory_info"].rss
    return out


def run(config: str, profile: str, clients: int, searches: int) -> dict:
    params = StdioServerParameters(command=sys.executable, env={**os.environ, "MUNINN_CONFIG": config},
                                   args=["-m", "muninn", "mcp", "--profile", profile, "--config", config])
    first: list[float] = []
    warm: list[float] = []
    peak: dict[int, int] = {}
    errors: list[str] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            for pid, rss in _mcp_rss(config).items():
                peak[pid] = max(peak.get(pid, 0), rss)
            time.sleep(0.5)

    async def one(i: int) -> None:
        async with Client(params, read_timeout_seconds=600) as client:
            for j in range(searches + 1):
                q = QUESTIONS[(i + j) % len(QUESTIONS)]
                t0 = time.perf_counter()
                res = await client.call_tool("recall_search", {"query": q})
                took = time.perf_counter() - t0
                if res.is_error:
                    errors.append(res.content[0].text[:200])
                (first if j == 0 else warm).append(took)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for i in range(clients):
                tg.start_soon(one, i)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    anyio.run(main)
    wall = time.perf_counter() - t0
    stop.set()
    sampler.join()
    mib = [v / 2**20 for v in peak.values()]
    return {"clients": clients, "searches": len(warm), "first_p50_s": round(statistics.median(first), 2),
            "warm_p50_s": round(_pct(warm, 0.5), 2), "warm_p95_s": round(_pct(warm, 0.95), 2),
            "rss_mib_per_process": round(statistics.mean(mib), 0) if mib else None,
            "rss_mib_total": round(sum(mib), 0), "processes": len(mib), "wall_s": round(wall, 1),
            "load_before": round(load0, 2), "load_after": round(os.getloadavg()[0], 2), "errors": errors[:3]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--profile", default="owner")
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--searches", type=int, default=4, help="timed searches per client, after its first")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    rows = []
    for n in args.clients:
        row = run(str(Path(args.config).resolve()), args.profile, n, args.searches)
        print(json.dumps(row), flush=True)
        rows.append(row)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
