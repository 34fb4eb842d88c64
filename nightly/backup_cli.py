"""`muninn backup create|restore`: the nightly backup by hand, and putting one area back."""

from __future__ import annotations

from pathlib import Path

import typer

from muninn.core.cliutil import JsonOpt, emit_json, say, settings
from muninn.nightly import backup

app = typer.Typer(help="Dated tars of what cannot be rebuilt, and restoring an area from one.", no_args_is_help=True)


@app.command("create")
def create(ctx: typer.Context, json_out: bool = JsonOpt) -> None:
    """Write a backup now: each reader's remember_to area (read with its key), the vault store,
    policy.yaml, the sync manifests and the server's account list, into <home>/backups/."""
    report = backup.create(settings(ctx))
    if json_out:
        emit_json(report.to_json())
        return
    say(f"{report.path}: {', '.join(f'{a} ({n})' for a, n in report.areas.items()) or 'no areas'}; "
        f"{', '.join(report.included[1:])}")
    for s in report.skipped:
        say(f"skipped: {s}")


@app.command("restore")
def restore(
    ctx: typer.Context,
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="A backup tar from <home>/backups/."),
    to: str = typer.Option(..., "--to", help="The area to put back, e.g. viking://resources/agents/raven."),
    json_out: bool = JsonOpt,
) -> None:
    """Put one backed-up area back on the server (with its reader's key), then read it back."""
    result = backup.restore(settings(ctx), file, to)
    if json_out:
        emit_json(result)
    else:
        say(f"restored {result['files']} file(s) to {result['area']} as {result['as']}")
