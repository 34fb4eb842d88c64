"""`muninn watch`: export the observation log and sync it, in a loop (or `--once`, as a hook)."""

from __future__ import annotations

import json
import sys

import typer

from muninn.core.cliutil import JsonOpt, err_console, settings
from muninn.core.errors import ExitCode

app = typer.Typer()


@app.command("watch")
def watch(
    ctx: typer.Context,
    interval: float = typer.Option(60.0, "--interval", min=1.0, help="Seconds between cycles."),
    once: bool = typer.Option(False, "--once", help="One cycle, then exit: for a client's session-end hook."),
    json_out: bool = JsonOpt,
) -> None:
    """Keep the observation log findable: export every `observations` source and sync the areas whose
    export changed, every --interval seconds, in the foreground (a systemd user unit keeps it running:
    `muninn nightly install --systemd`). Each cycle prints how old the newest observation an agent can
    find is (--json: one JSON line per cycle).

    Exit 0; with --once, 13 when the cycle could not export or sync a source (named on stderr).
    """
    from muninn.nightly import watch as watch_mod

    s = settings(ctx)

    def emit(result: dict) -> None:
        if json_out:
            sys.stdout.write(json.dumps(result) + "\n")
            sys.stdout.flush()
        else:
            err_console.print(watch_mod.line(result), highlight=False, markup=False, soft_wrap=True)

    try:
        failed = watch_mod.loop(s, interval, once, emit)
    except KeyboardInterrupt:
        raise typer.Exit(ExitCode.OK) from None
    raise typer.Exit(ExitCode.JOB_FAILED if failed else ExitCode.OK)
