"""`muninn backup offsite init|push|list|check|restore`: the sealed backups on another host (offsite.py)."""

from __future__ import annotations

import typer

from muninn.core.cliutil import JsonOpt, emit_json, say, settings
from muninn.core.errors import ConfigError
from muninn.nightly.backup import offsite
from muninn.nightly.backup import restore as backup_restore

app = typer.Typer(help="Copies of the sealed backups in a restic repository off this host "
                  "(nightly.offsite.repository).", no_args_is_help=True)


@app.command("init")
def init(ctx: typer.Context) -> None:
    """Create the repository (or prove an existing one opens). Its password is derived from the backup
    key, so `muninn backup key export` is the one key file a new machine needs."""
    s = settings(ctx)
    how = offsite.init(s)
    say(f"{how} the restic repository {s.nightly.offsite.repository}")


@app.command("push")
def push(ctx: typer.Context,
         fresh: bool = typer.Option(False, "--fresh", help="Make a backup now first (what the hourly timer runs)."),
         json_out: bool = JsonOpt) -> None:
    """Copy every sealed backup the repository lacks, then apply retention (hourly, daily, weekly)."""
    report = offsite.push(settings(ctx), fresh=fresh)
    if json_out:
        emit_json(report.to_json())
        return
    say(f"copied {len(report.sent)} backup(s) to {report.repository} ({report.already} there before, "
        f"{report.forgotten} snapshot(s) past retention removed)")


@app.command("list")
def list_(ctx: typer.Context, json_out: bool = JsonOpt) -> None:
    """The backups the repository holds, oldest first."""
    found = offsite.snapshots(settings(ctx))
    if json_out:
        emit_json([{"id": s["short_id"], "time": s["time"], "archive": offsite.archive_name(s)} for s in found])
        return
    for s in found:
        print(f"{s['short_id']}  {s['time'][:19]}  {offsite.archive_name(s)}")
    if not found:
        say("the repository holds no muninn backup yet: `muninn backup offsite push`")


@app.command("check")
def check(ctx: typer.Context,
          quick: bool = typer.Option(False, "--quick", help="Check the structure only, without reading "
                                     "every pack back.")) -> None:
    """The drill: `restic check` (reading every pack back unless --quick). Exit 29 on any error."""
    say(offsite.check(settings(ctx), read_data=not quick))


@app.command("restore")
def restore(
    ctx: typer.Context,
    snapshot: str = typer.Argument("latest", help="A snapshot id or archive name from `backup offsite list`."),
    to: str = typer.Option(None, "--to", help="One area to put back."),
    everything: bool = typer.Option(False, "--all", help="Everything: a new machine's restore."),
    replace: bool = typer.Option(False, "--replace", help="Overwrite files that differ."),
    json_out: bool = JsonOpt,
) -> None:
    """Fetch one backup from the repository into <home>/backups/ and restore it exactly as `backup restore`
    does: sealed only, confined, every file through the leak gate. Exit codes as `backup restore`'s, and 29
    when the repository cannot be read."""
    if (to is None) == (not everything):
        raise ConfigError("choose one of --to AREA or --all", key="restore",
                          fix="e.g. `muninn backup offsite restore --all` on a new machine")
    s = settings(ctx)
    path = offsite.fetch(s, snapshot)
    say(f"fetched {path.name}")
    report = backup_restore.restore(s, path, area=to, everything=everything, replace=replace)
    if json_out:
        emit_json(report.to_json())
    else:
        say(f"restored {len(report.written)} file(s) ({report.redacted} redacted), {report.unchanged} already "
            f"there, {len(report.local)} local file(s)" + (f", {len(report.held)} held" if report.held else ""))
        for w in report.warnings:
            say(f"warning: {w}")
    backup_restore.raise_for(report)
