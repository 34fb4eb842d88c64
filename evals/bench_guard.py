"""Benchmark the MCP guard: what it adds to a call, against calling OpenViking directly.

Run: `.venv/bin/python -m muninn.evals.bench_guard`. Starts its own stack in a temporary workspace
on free ports (like bench_stack), writes 200 files, and a vault-sized list of 1,000 known secret
values. Then, paired and interleaved on the same URIs:

- direct: `OpenViking.read(uri)` with the agent's key;
- guarded, in process: `server.call(session, "recall_read", ...)`: tool check, argument
  validation, URI canonicalisation (cache cleared before every call: the worst case), the same
  read, untrusted labelling, value + pattern redaction of the result, one audit line;
- guarded over stdio: a real MCP client to `muninn mcp --profile raven`, JSON-RPC and pipes included;
- recall_search against the search pipeline called directly.

Prints a markdown table and writes evals/results/guard.md. Target: ≤ 2 ms added at p50.
"""

from __future__ import annotations

import os
import platform
import random
import secrets as pysecrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

from muninn.core import config, credentials, paths
from muninn.core.client import OpenViking
from muninn.evals.benchutil import free_port, pct
from muninn.guards.policy import tools as tool_guard
from muninn.guards.policy import uri as uri_guard
from muninn.plugins.mcp import server
from muninn.plugins.mcp.session import GuardSession
from muninn.plugins.stack import lifecycle

WORDS = ("backup restore postgres nginx certificate kubernetes node drain dns resolver vpn tunnel redis "
         "memory grafana alert terraform lock disk volume rotate token deploy rollback incident runbook").split()
N = 300
NOTES = """
How to read it: the paired difference is guarded minus direct for the same URI, back to back, so its p50 is
the guard's cost; its p95 is mostly the server's own jitter on a shared 2-core machine. The guard's parts
(tool and URI check with the canonicalisation cache cleared, value redaction with 1,000 known values, one
audit line) are each around 0.01 ms. recall_search runs right after the direct pipeline call with the same
query, so it finds the content cache warm: "guarded faster than direct" there is that, not a negative cost.
Over stdio the extra milliseconds are JSON-RPC framing, pipes and the client, not the guard.
"""


def _ms(values: list[float]) -> str:
    return f"{pct(values, 0.5):.2f} / {pct(values, 0.95):.2f}"


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def stack_config(tmp: Path) -> tuple[Path, dict]:
    """A muninn.yaml for a stack of its own in `tmp`, on free ports (muninn bench times its start)."""
    cfg_path = tmp / "muninn.yaml"
    # A long call timeout: on a shared 2-core machine a batch write can wait minutes for the server.
    base = {"home": str(tmp / "home"), "server": {"port": free_port(), "venv": str(paths.server_venv()),
                                                  "timeout": 600},
            "embed": {"port": free_port()}, "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"}}
    cfg_path.write_text(yaml.safe_dump(base))
    return cfg_path, base


def _setup(tmp: Path, configured: tuple[Path, dict] | None = None, facts: int = 200) -> tuple[Path, list[str], str]:
    cfg_path, base = configured or stack_config(tmp)
    settings = config.load(cfg_path)
    lifecycle.up(settings, say=lambda m: None, config_file=cfg_path)   # a no-op when it already runs
    root = OpenViking.root(settings)
    account = f"bench{pysecrets.token_hex(4)}"
    owner_key = root.create_account(account, "owner")
    raven_key = root.register_user(account, "raven", "user")
    ring = credentials.for_server(settings)
    ring.set(credentials.user_key_name(account, "owner"), owner_key)
    ring.set(credentials.user_key_name(account, "raven"), raven_key)
    rng = random.Random(5)
    known = [pysecrets.token_urlsafe(24) for _ in range(1000)]
    (tmp / "secrets.yaml").write_text(yaml.safe_dump([{"id": f"s{i}", "value": v} for i, v in enumerate(known)]))
    uris = []
    with OpenViking(settings.server.base_url, owner_key, timeout=settings.server.timeout) as owner:
        for folder in ("viking://resources/shared", "viking://resources/agents", "viking://resources/agents/raven"):
            owner.ensure_dir(folder)
        files = {}
        for i in range(facts):
            area = "viking://resources/agents/raven/obs" if i % 4 == 0 else "viking://resources/shared/notes"
            body = " ".join(rng.choice(WORDS) for _ in range(220))
            if i % 10 == 0:
                body += f" token {known[i]}"
            files[f"{area}/fact-{i:03d}.md"] = f"# Fact {i}\nA note from the ops record.\n\n{body}\n"
        for area in ("viking://resources/agents/raven/obs", "viking://resources/shared/notes"):
            owner.ensure_dir(area)
            owner.batch_write(area, {u: c for u, c in files.items() if u.startswith(area)})
        owner.wait()
        uris = list(files)
    policy = {"version": 1, "areas": {"shared": "viking://resources/shared", "raven": "viking://resources/agents/raven"},
              "readers": {"raven": {"kind": "agent", "account": account, "user": "raven",
                                    "areas": {"shared": "read", "raven": "write"}, "remember_to": "raven"}}}
    (tmp / "policy.yaml").write_text(yaml.safe_dump(policy))
    cfg = dict(base, guard={"policy": str(tmp / "policy.yaml"), "audit_log": str(tmp / "audit.jsonl"),
                            "secret_files": [str(tmp / "secrets.yaml")]},
               search={"rerank": {"enabled": False}})
    cfg_path.write_text(yaml.safe_dump(cfg))
    return cfg_path, uris, account


def _stdio(cfg_path: Path, uris: list[str], direct: OpenViking) -> tuple[list[float], list[float]]:
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, env=dict(os.environ),
                                   args=["-m", "muninn", "mcp", "--profile", "raven", "--config", str(cfg_path)])
    d, g = [], []

    async def main() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            await client.call_tool("recall_read", {"uri": uris[0]})  # warm
            for i in range(100):
                uri = uris[i % len(uris)]
                d.append(_timed(lambda u=uri: direct.read(u)))
                t = time.perf_counter()
                await client.call_tool("recall_read", {"uri": uri})
                g.append((time.perf_counter() - t) * 1000)

    anyio.run(main)
    return d, g


def paired_reads(session: GuardSession, direct: OpenViking, uris: list[str], n: int,
                 ) -> tuple[list[float], list[float], list[float]]:
    """ms of direct reads, guarded reads and their paired difference, back to back on the same URI."""
    d, g, added = [], [], []
    for i in range(n):
        uri = uris[i % len(uris)]
        uri_guard._canonicalize.cache_clear()
        a = _timed(lambda u=uri: direct.read(u))
        b = _timed(lambda u=uri: server.call(session, "recall_read", {"uri": u}))
        d.append(a)
        g.append(b)
        added.append(b - a)
    return d, g, added


def main() -> None:
    os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyrings.alt.file.PlaintextKeyring")
    tmp = Path(tempfile.mkdtemp(prefix="muninn-bench-guard-"))
    os.environ["XDG_DATA_HOME"] = str(tmp / "xdg")
    os.environ["MUNINN_HOME"] = str(tmp / "home")
    cfg_path, uris, account = _setup(tmp)
    settings = config.load(cfg_path)
    rows: list[tuple[str, str]] = []
    try:
        session = GuardSession.open(settings, "raven")
        direct = OpenViking.user(settings, account, "raven")
        for uri in uris[:20]:  # warm both paths
            direct.read(uri)
            server.call(session, "recall_read", {"uri": uri})
        d, g, added = paired_reads(session, direct, uris, N)
        rows.append(("recall_read direct (OpenViking.read), ms p50 / p95", _ms(d)))
        rows.append(("recall_read guarded in process, ms p50 / p95", _ms(g)))
        rows.append(("**added by the guard**, paired difference, ms p50 / p95", f"**{_ms(added)}**"))

        refused = [_timed(lambda: server.call(session, "privacy_resolve", {})) for _ in range(N)]
        rows.append(("refused call (forbidden tool, audited), ms p50 / p95", _ms(refused)))
        bad = [_timed(lambda i=i: server.call(session, "recall_read", {"uri": f"viking://resources/agents/raven/%2e%2e/bob/x{i}"}))
               for i in range(N)]
        rows.append(("refused call (adversarial URI, audited), ms p50 / p95", _ms(bad)))

        prof = session.profile
        canon = []
        for i in range(N):
            uri_guard._canonicalize.cache_clear()
            canon.append(_timed(lambda u=uris[i % len(uris)]: tool_guard.check_call(prof, "recall_read", u)))
        rows.append(("  part: tool + URI check (uncached), ms p50 / p95", _ms(canon)))
        text = direct.read(uris[0])
        red = [_timed(lambda: session.redactor.scrub(text)) for _ in range(N)]
        rows.append((f"  part: value redaction of one {len(text)}-char result ({session.redactor.count} "
                     "values), ms p50 / p95", _ms(red)))
        full = [_timed(lambda: session.redactor.scrub_all(text)) for _ in range(50)]
        rows.append(("  for comparison: values + patterns (used only on what recall_remember stores), "
                     "ms p50 / p95", _ms(full)))
        aud = [_timed(lambda: session.audit.record(profile="raven", tool="recall_read", arguments={"uri": uris[0]},
                                                   decision="allow", reason="bench", duration_ms=0.0))
               for _ in range(N)]
        rows.append(("  part: one audit line, ms p50 / p95", _ms(aud)))

        queries = [" ".join(random.Random(i).sample(WORDS, 3)) for i in range(40)]
        sd, sg = [], []
        for q in queries[:5]:
            session.searcher.search(q, k=12)
        for q in queries:
            sd.append(_timed(lambda q=q: session.searcher.search(q, k=12)))
            sg.append(_timed(lambda q=q: server.call(session, "recall_search", {"query": q})))
        rows.append(("search pipeline direct (rerank off), ms p50 / p95", _ms(sd)))
        rows.append(("recall_search guarded (same pipeline), ms p50 / p95", _ms(sg)))
        rows.append(("  added, difference of medians, ms", f"{statistics.median(sg) - statistics.median(sd):.2f}"))

        sd2, sg2 = _stdio(cfg_path, uris, direct)
        rows.append(("recall_read over stdio MCP (real client, JSON-RPC), ms p50 / p95", _ms(sg2)))
        rows.append(("  same reads direct, ms p50 / p95", _ms(sd2)))
        session.close()
        direct.close()
    finally:
        lifecycle.down(settings, say=lambda m: None)
    head = (f"# Guard overhead\n\n{platform.node()} · {os.cpu_count()} cores · Python {platform.python_version()} · "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · N={N} paired calls\n\n")
    table = "| measure | value |\n| --- | --- |\n" + "\n".join(f"| {a} | {b} |" for a, b in rows) + "\n"
    text = head + table + NOTES
    print(text)
    target = Path(__file__).resolve().parent / "results" / "guard.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


if __name__ == "__main__":
    main()
