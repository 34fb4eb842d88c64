"""`muninn verify [--dry-run] [--json] [ID...]`."""

from __future__ import annotations

import threading
import time
from collections import Counter

import typer
from rich.markup import escape

from muninn.core.cliutil import JsonOpt, Progress, console, emit_json, renamed, say, settings
from muninn.core.errors import ExitCode

from . import sweep

app = typer.Typer()

_COLOURS = {"ok": "green", "stale": "yellow", "unreachable": "magenta", "missing": "cyan", "skipped": "dim",
            "failed": "red"}


@app.command("verify")
def verify(
    ctx: typer.Context,
    ids: list[str] = typer.Argument(None, help="Only these inventory entries / secrets (default: all)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan and the guard's verdict for every "
                                 "command; run nothing."),
    parallel: int = typer.Option(None, "--parallel", "-j", help="Commands at once (default: verify.parallel)."),
    # `-p` is `--profile` everywhere else; here it was --parallel. verify has no --profile, so it still
    # means --parallel, with a warning.
    old_p: int = typer.Option(None, "-p", hidden=True),
    json_out: bool = JsonOpt,
) -> None:
    """Prove, read-only, that each route and credential still works.

    Runs every inventory entry's `verify` command and every secret's `check` command, each through
    the read-only command guard. Statuses: ok; stale (authentication error: log in or rotate);
    unreachable (network error); missing (context, profile or binary absent); skipped (a
    prerequisite is down, or the guard refused); failed (an error muninn could not classify).
    Results are stored: `access show` / `secret show` print "last verified: ok 2h ago".

    Exit 0 when nothing is stale, unreachable, missing or failed; 1 otherwise.

    \b
    Examples:
      muninn verify --dry-run          (the plan: each command, or why the guard refuses it)
      muninn verify                    (every entry and secret)
      muninn verify ops-cluster jira-api-token --json
    """
    if old_p is not None:
        renamed("verify -p N", "verify -j N (or --parallel N)")
        parallel = old_p if parallel is None else parallel
    cfg = settings(ctx)
    items = sweep.plan(cfg, ids or ())
    if dry_run:
        if json_out:
            emit_json([i.as_dict() for i in items])
            return
        # One line per command, so the whole plan can be read (and diffed) before the first real run.
        for i in items:
            verdict = "allow " if i.allowed else "REFUSE"
            lane = "serial  " if i.serial else "parallel"
            line = f"{verdict} {lane} {i.kind:<12} {i.id:<24} {i.command}"
            if i.requires:
                line += f"   [requires {', '.join(i.requires)}]"
            if i.dropped:
                line += f"   [dropped: {'; '.join(i.dropped)}]"
            setup = [step for step in i.script.splitlines()[:-1]] if i.kind == "inventory" else []
            for step in setup:
                line += f"\n       runs first (owner's setup step, not judged): {step.split(' || ', 1)[0]}"
            if not i.allowed:
                line += f"\n       reason: {i.verdict}"
            console.print(line, highlight=False, markup=False, soft_wrap=True)
        return
    started = time.monotonic()
    lock = threading.Lock()    # the sweep's worker threads report as they finish
    with Progress("verify", len(items)) as bar:
        def tick(item_id: str) -> None:
            with lock:
                bar.tick(item_id)

        results = sweep.run(cfg, items, parallel=parallel, progress=tick)
    counts = Counter(r.status for r in results)
    if not results:
        say("verify: nothing to check: no inventory entry has `verify`, no secret has `check` and no "
            "prerequisite is declared (`inventory.files`, `vault.files` in muninn.yaml)")
    else:
        say(f"verify: {len(results)} checked in {time.monotonic() - started:.1f} s: "
            + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())))
    if json_out:
        emit_json([r.as_dict() for r in results])
    else:
        # One line per result: readable in a terminal and in a cron mail alike.
        for r in results:
            colour = _COLOURS.get(r.status, "white")
            console.print(f"[{colour}]{r.status:<11}[/] {r.kind:<12} {escape(r.id):<24} {escape(r.reason)}"
                          f"  [dim]({r.seconds:.1f} s)[/]", highlight=False, soft_wrap=True)
    if any(r.status not in ("ok", "skipped") for r in results):
        raise typer.Exit(ExitCode.CHECK_FAILED)
