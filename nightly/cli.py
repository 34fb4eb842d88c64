"""`muninn nightly`: for cron. Exit 0 when every job passed, 1 otherwise; a JSON report is kept."""

from __future__ import annotations

import typer
from rich.table import Table

from muninn.core.cliutil import JsonOpt, console, emit_json, say, settings
from muninn.core.errors import ExitCode
from muninn.nightly import runner

app = typer.Typer()


@app.command("nightly")
def nightly(
    ctx: typer.Context,
    only: list[str] = typer.Option(None, "--only", help="Run just these jobs (repeatable)."),
    json_out: bool = JsonOpt,
) -> None:
    """Run the nightly checks: ACL drift and stray top-level folders against policy.yaml, unapproved
    skills, the leak gate over every exported tree, completeness of synced areas, the verify sweep.

    Every job runs even if an earlier one failed. The report is also written to
    <workspace>/nightly/<time>.json. Example crontab line:

        15 3 * * *  muninn nightly --json > /dev/null || notify-owner
    """
    s = settings(ctx)
    results = runner.run(s, only)
    path = runner.save(s, results)
    if json_out:
        emit_json({**runner.report(results), "report": str(path)})
    else:
        table = Table("job", "", "detail", "s")
        for r in results:
            table.add_row(r.name, "[green]ok[/]" if r.ok else "[red]FAIL[/]", r.detail, f"{r.seconds:.1f}")
        console.print(table)
        say(f"report: {path}")
    if not all(r.ok for r in results):
        raise typer.Exit(ExitCode.CHECK_FAILED)
