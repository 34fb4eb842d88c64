"""Warm search through the long-lived MCP server, as an agent sees it: a real stdio MCP client spawns
`muninn mcp --profile P`, waits for the initialize answer, then times recall_search calls. Run once with
the cross-encoder (rerank of 20) and once without (search.rerank.enabled false, since agents get no
per-call switch). The server warms its searcher in the background at start, so the first search is
timed apart (it may still wait for that warm-up). Every later question is new to the server (the
searcher keeps each question's scores, so a repeat costs no cross-encoder run); repeats are timed apart.

    python -m muninn.evals.lab.bench_mcp_warm [--repeats 10] [--pause S] [--profile owner]

Starts its own stack on free ports with the demo corpus (examples/), syncs it with one `muninn
nightly`, and prints a markdown table with the load average; writes nothing into the repository.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

from muninn.core import config
from muninn.core import policy as policy_mod
from muninn.evals import sealed
from muninn.evals.benchutil import pct
from muninn.evals.lab import bench_nightly
from muninn.plugins.stack import lifecycle, policy_apply

EXTRA = ["how did we rotate the certificate", "why did the jira api return 403", "what broke the backups",
             "how is the vpn set up", "which dashboards show disk usage", "how do we restart the ingress",
             "who owns the on-call rota", "what happened during the dns outage", "postgres upgrade rollback",
             "nas admin password rotation", "grafana alert for disk full", "restic backup schedule"]


def questions() -> list[str]:
    """Distinct questions: the sealed ops set's and a few more. The searcher keeps each (question, fact)
    score, so a repeated question is timed apart, as a repeat."""
    asked = [q.question for q in sealed.load_set(sealed.QUESTIONS_DIR / "ops.yaml")[0].questions]
    return list(dict.fromkeys(asked + EXTRA))


def _variant(cfg: Path, rerank: bool) -> Path:
    data = yaml.safe_load(cfg.read_text())
    data.setdefault("search", {}).setdefault("rerank", {})["enabled"] = rerank
    out = cfg.with_name(f"muninn-rerank-{'on' if rerank else 'off'}.yaml")
    out.write_text(yaml.safe_dump(data))
    return out


def measure(cfg: Path, profile: str, repeats: int, pause: float = 0.0) -> dict[str, float]:
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, env={**os.environ, "MUNINN_CONFIG": str(cfg)},
                                   args=["-m", "muninn", "--config", str(cfg), "mcp", "--profile", profile])
    row: dict[str, float] = {"load_start": os.getloadavg()[0]}
    asked = questions()
    new: list[float] = []
    again: list[float] = []

    async def search(client, query: str) -> float:
        t = time.perf_counter()
        res = await client.call_tool("recall_search", {"query": query})
        if res.is_error:
            raise SystemExit(f"recall_search failed: {res.content[0].text[:300]}")
        return (time.perf_counter() - t) * 1000

    async def main() -> None:
        t0 = time.perf_counter()
        async with Client(params, read_timeout_seconds=600) as client:
            row["initialised_s"] = time.perf_counter() - t0
            await anyio.sleep(pause)     # an agent reads its instructions before it searches
            row["first_ms"] = await search(client, asked[0])
            for q in asked[1:]:
                new.append(await search(client, q))
            for i in range(repeats):
                again.append(await search(client, asked[i % len(asked)]))

    anyio.run(main)
    row |= {"p50_ms": statistics.median(new), "p95_ms": pct(new, 0.95), "n": len(new),
            "again_p50_ms": statistics.median(again) if again else math.nan, "load_end": os.getloadavg()[0]}
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=10, help="searches of questions already asked")
    ap.add_argument("--profile", default="owner")
    ap.add_argument("--pause", type=float, default=0.0, help="seconds between initialize and the first search")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="muninn-bench-mcp-warm-"))
    os.environ["XDG_DATA_HOME"] = str(tmp / "xdg")
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyrings.alt.file.PlaintextKeyring"
    cfg = bench_nightly._workspace(tmp)
    settings = config.load(cfg)
    lifecycle.up(settings, say=lambda m: None, config_file=cfg)
    rows = {}
    try:
        assert policy_apply.apply(settings, policy_mod.load_for(settings), say=lambda m: None).ok
        bench_nightly._night(cfg)          # exports, syncs and indexes the demo corpus
        for rerank in (True, False):
            rows[rerank] = measure(_variant(cfg, rerank), args.profile, args.repeats, args.pause)
            print(f"[mcp-warm] rerank={rerank}: {rows[rerank]}", file=sys.stderr, flush=True)
    finally:
        lifecycle.down(settings, say=lambda m: None)
    print(f"Warm `recall_search` through stdio MCP (`muninn mcp --profile {args.profile}`), demo corpus, "
          f"{os.cpu_count()} cores; the first search came {args.pause:g} s after initialize, then "
          f"{rows[True]['n']} new questions, then {args.repeats} repeated ones.\n")
    print("| | initialize s | first search ms | new question p50 ms | p95 ms | repeated question p50 ms | "
          "load avg start / end |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for rerank, r in rows.items():
        print(f"| {'rerank of 20' if rerank else 'no rerank'} | {r['initialised_s']:.2f} | {r['first_ms']:.0f} | "
              f"{r['p50_ms']:.0f} | {r['p95_ms']:.0f} | {r['again_p50_ms']:.0f} | "
              f"{r['load_start']:.2f} / {r['load_end']:.2f} |")


if __name__ == "__main__":
    main()
