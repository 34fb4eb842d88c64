"""`muninn nightly`: for cron. Exit 0 clean, 1 findings or drift, 13 when a job could not run,
14 when another run holds the lock. A JSON report is kept per run."""

from __future__ import annotations

import typer
from rich.table import Table

from muninn.core.cliutil import JsonOpt, console, emit_json, say, settings
from muninn.nightly import lock, runner

app = typer.Typer()

_MARK = {"ok": "[green]ok[/]", "warn": "[yellow]warn[/]", "findings": "[red]FOUND[/]", "error": "[red]ERROR[/]"}


def _table(jobs: list[dict]) -> Table:
    table = Table("job", "", "detail", "s")
    for r in jobs:
        table.add_row(r["name"], _MARK.get(r.get("status") or "", "?"), r["detail"], f"{r['seconds']:.1f}")
    return table


@app.command("nightly")
def nightly(
    ctx: typer.Context,
    only: list[str] = typer.Option(None, "--only", help="Run just these jobs (repeatable)."),
    last: bool = typer.Option(False, "--last", help="Show the latest saved report instead of running."),
    json_out: bool = JsonOpt,
) -> None:
    """Run the nightly jobs: ACL drift and stray top-level folders, unapproved skills, the leak gate
    over every exported tree, a leak scan of everything on the server, completeness of synced areas,
    the verify sweep.

    Every job runs even if an earlier one failed; one run at a time (a second exits 14 naming the
    first one's PID). Exit 0 clean (warnings allowed), 1 findings, 13 a job could not run. The report
    is written to <workspace>/nightly/<time>.json. Example crontab line:

        15 3 * * *  muninn nightly --json > /dev/null || notify-owner
    """
    s = settings(ctx)
    if last:
        path, data = runner.last(s)
        if json_out:
            emit_json({**data, "report": str(path)})
        else:
            console.print(_table(data["jobs"]))
            say(f"report: {path} (finished {data.get('finished', '?')})")
        raise typer.Exit(data.get("exit_code", 0 if data.get("ok") else 1))
    with lock.held(s.paths.nightly_lock):
        results = runner.run(s, only)
        path = runner.save(s, results)
    data = runner.report(results)
    if json_out:
        emit_json({**data, "report": str(path)})
    else:
        console.print(_table(data["jobs"]))
        say(f"report: {path}")
    raise typer.Exit(runner.exit_code(results))
