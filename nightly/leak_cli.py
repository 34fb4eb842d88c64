"""`muninn leak scan|purge`: the server leak scan by hand, and the clean-up of what it found."""

from __future__ import annotations

import typer
from rich.table import Table

from muninn.core.cliutil import JsonOpt, console, emit_json, say, settings
from muninn.core.errors import ExitCode
from muninn.nightly import purge as purge_mod
from muninn.nightly import server_scan

app = typer.Typer(help="What is stored on the server, checked for known values (retired ones too) and "
                       "pattern rules; and purged.", no_args_is_help=True)


def _findings_table(report: server_scan.ScanReport) -> Table:
    table = Table("uri", "found (rule:secret id, line)", "seen as")
    for f in report.found:
        table.add_row(f.uri, ", ".join(sorted({f"{x['reason']}:{x['secret_id'] or ''} L{x['line']}"
                                               for x in f.findings})), ", ".join(f.seen_as))
    return table


@app.command("scan")
def scan(ctx: typer.Context, json_out: bool = JsonOpt,
         full: bool = typer.Option(False, "--full", help="Read every file, also those found clean last time "
                                   "and unchanged since.")) -> None:
    """Walk everything stored in OpenViking (as the CLI's user and as each policy reader with a key)
    and report each file holding a known value, a retired one or a pattern hit: URI, secret id or
    rule, line; never the value. A file found clean last time, unchanged since (same size and modTime)
    and checked for the same known values and rules is not read again (a full scan weekly). Exit 1
    when anything is found."""
    report = server_scan.scan(settings(ctx), full=full)
    if json_out:
        emit_json(report.to_json())
    else:
        console.print(_findings_table(report))
        say(f"{report.files} file(s) scanned as {', '.join(report.identities)} ({report.unchanged} unchanged "
            f"since they were found clean, not read again); {len(report.found)} hold a secret")
        for u in report.unreadable:
            say(f"not scanned: {u}")
    raise typer.Exit(ExitCode.CHECK_FAILED if report.found else ExitCode.OK)


@app.command("purge")
def purge(
    ctx: typer.Context,
    dry_run: bool = typer.Option(False, "--dry-run", help="Say what would be removed or redacted; change nothing."),
    json_out: bool = JsonOpt,
) -> None:
    """Scan, then clean each file found: remove it where a sync manifest says muninn wrote it (the
    next `sync all` brings it back redacted), else rewrite it redacted. Busy answers are retried with
    backoff; each file is read back and scanned again. Exit 1 if any file could not be cleaned."""
    report = purge_mod.purge(settings(ctx), dry_run=dry_run)
    if json_out:
        emit_json(report.to_json())
    else:
        table = Table("uri", "action", "reason")
        for p in report.files:
            table.add_row(p.uri, p.action, p.reason)
        console.print(table)
        say(f"{len(report.scan.found)} file(s) held a secret; "
            f"{sum(p.action in ('removed', 'redacted') for p in report.files)} cleaned")
    raise typer.Exit(ExitCode.OK if report.ok else ExitCode.CHECK_FAILED)
