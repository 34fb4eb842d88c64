"""`muninn backup create|restore`: the nightly backup by hand, and putting an area or everything back."""

from __future__ import annotations

from pathlib import Path

import typer

from muninn.core.cliutil import JsonOpt, emit_json, say, settings
from muninn.core.errors import ConfigError
from muninn.nightly import backup, backup_restore

app = typer.Typer(help="Dated backups of what cannot be rebuilt, and restoring from one.", no_args_is_help=True)


@app.command("create")
def create(ctx: typer.Context, json_out: bool = JsonOpt) -> None:
    """Write a backup now into <home>/backups/: every server file no export wrote or a reader changed
    (read with each reader's key), the vault store, policy.yaml, the sync manifests, the other local
    state nothing rebuilds, and the server's account list. Keys are never in it."""
    report = backup.create(settings(ctx))
    if json_out:
        emit_json(report.to_json())
        return
    say(f"{report.path} ({report.size} bytes): "
        f"{', '.join(f'{a} ({n})' for a, n in report.areas.items()) or 'no server files'}; "
        f"{report.rebuildable} file(s) left to the exports; {', '.join(report.included[1:])}")
    for s in report.skipped:
        say(f"skipped: {s}")


@app.command("restore")
def restore(
    ctx: typer.Context,
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="A backup from <home>/backups/."),
    to: str = typer.Option(None, "--to", help="One area to put back, e.g. viking://resources/agents/raven."),
    everything: bool = typer.Option(False, "--all", help="Everything: every server file and the local parts "
                                    "(policy, vault store, manifests, ...): a new machine's restore."),
    replace: bool = typer.Option(False, "--replace", help="Overwrite files that are there with other bytes "
                                 "(otherwise they are named, kept, and the restore exits 19)."),
    json_out: bool = JsonOpt,
) -> None:
    """Put files back (each with the key of a reader that may write there), read them back, and bring
    every reader's keyword index and search vectors up to date, so restored facts are findable at once.

    Exit 19 when a file that differs was kept (named; `--replace` overwrites)."""
    if (to is None) == (not everything):
        raise ConfigError("choose one of --to AREA or --all", key="restore",
                          fix="e.g. `muninn backup restore FILE --to viking://resources/agents/raven`")
    report = backup_restore.restore(settings(ctx), file, area=to, everything=everything, replace=replace)
    _say(report, json_out)
    backup_restore.raise_for(report)


def _say(report: backup_restore.RestoreReport, json_out: bool) -> None:
    if json_out:
        emit_json(report.to_json())
        return
    say(f"restored {len(report.written)} file(s) as {', '.join(sorted(report.writers)) or 'nobody'}, "
        f"{report.unchanged} already there, {len(report.local)} local file(s)")
    for w in report.warnings:
        say(f"warning: {w}")
