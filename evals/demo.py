"""`muninn demo`: the main job end to end on the sample corpus.

Stack up → policy applied (readers, keys, ACLs) → vault filled → every source exported (redacted,
leak-gated) and synced → keyword indexes built per reader → one search through the guarded MCP
server as the local agent → the sealed eval, compared with the last run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

from muninn.core import policy as policy_mod
from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.core.errors import MuninnError
from muninn.evals import report, sealed
from muninn.export import pipeline, sync
from muninn.plugins.access.vault import Vault
from muninn.plugins.search import keyword
from muninn.plugins.stack import lifecycle, policy_apply

DEMO_QUERY = "where do I look at a docker container's logs"
Say = Callable[[str], None]


def _step(console: Console, title: str) -> None:
    console.rule(f"[bold]{title}")


def build_indexes(settings: Settings, pol: policy_mod.Policy, say: Say) -> None:
    """One keyword index per reader, built with that reader's key: it holds only what it may read."""
    for p in pol.profiles.values():
        with OpenViking.user(settings, p.account, p.user) as client:
            stats = keyword.build_from_openviking(client, "viking://resources",
                                                  settings.paths.search_index(p.account, p.user))
        say(f"keyword index for {p.name}: {stats}")


def search_through_guard(config_path: Path | None, profile: str, query: str) -> str:
    """A real MCP client over stdio, exactly as an agent would connect."""
    import anyio
    from mcp import Client, StdioServerParameters

    args = ["-m", "muninn", *(["--config", str(config_path)] if config_path else []), "mcp", "--profile", profile]
    # The SDK passes only a minimal environment to the server by default; the guard needs the
    # keyring backend and workspace settings this process runs with.
    params = StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ))

    async def main() -> str:
        async with Client(params, read_timeout_seconds=300) as client:
            result = await client.call_tool("recall_search", {"query": query})
            text = "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
            if result.is_error:
                raise MuninnError(f"recall_search through the guard failed: {text}")
            return text

    return anyio.run(main)


def run(settings: Settings, config_path: Path | None, console: Console, say: Say) -> sealed.EvalRun:
    _step(console, "1. local stack")
    lifecycle.up(settings, say=say, config_file=config_path)

    _step(console, "2. readers, keys and ACLs from policy.yaml")
    pol = policy_mod.load_for(settings)
    applied = policy_apply.apply(settings, pol, say=say)
    if not applied.ok:
        raise SystemExit("policy apply left drift; see above")

    _step(console, "3. vault")
    vault = Vault.open(settings, who="demo")
    try:
        say(f"secret load: {vault.sync().as_dict()}")
    finally:
        vault.close()

    _step(console, "4. export (redact by value and pattern, then the leak gate)")
    reports = pipeline.run_all(settings)
    table = Table("source", "facts", "written", "unchanged", "redacted", "dropped")
    for name, r in reports.items():
        table.add_row(name, str(r.facts), str(r.written), str(r.unchanged), str(r.redacted), str(len(r.dropped)))
    console.print(table)

    _step(console, "5. sync into OpenViking")
    with OpenViking.user(settings) as client:
        synced = sync.sync_all(client, settings)
    table = Table("area", "written", "unchanged", "removed", "missing after wait")
    for area, r in synced.items():
        table.add_row(area, str(r.written), str(r.unchanged), str(r.removed), str(r.missing_after_wait))
    console.print(table)
    build_indexes(settings, pol, say)

    _step(console, f"6. one search through the guard, as the local agent: {DEMO_QUERY!r}")
    agent = next((p.name for p in pol.profiles.values() if p.is_agent), next(iter(pol.profiles)))
    console.print(search_through_guard(config_path, agent, DEMO_QUERY), markup=False, highlight=False)

    _step(console, "7. the sealed eval (ops question set), compared with the last run")
    run, lost = report.eval_and_compare(settings, console, label="demo")
    if lost:
        console.print(f"[yellow]the sealed set lost to its last run: {lost}[/]")
    return run
