"""`muninn doctor`."""

from __future__ import annotations

import typer
from rich.markup import escape
from rich.table import Table

from muninn.core.cliutil import JsonOpt, console, emit_json, settings
from muninn.core.errors import ExitCode
from muninn.plugins.stack import doctor

app = typer.Typer()

_STYLE = {"ok": "[green]ok[/]", "warn": "[yellow]warn[/]", "pending": "[cyan]pending[/]", "fail": "[red]FAIL[/]"}


@app.command("doctor")
def doctor_cmd(ctx: typer.Context, json_out: bool = JsonOpt) -> None:
    """Check what is installed, running and reachable; print each problem with its fix.

    A row is ok, warn, pending (not done yet: `muninn up` does it, as after `muninn init`) or FAIL.
    Exit 0 when nothing failed (warnings and pending rows allowed), 1 otherwise.
    """
    results = doctor.run(settings(ctx))
    if json_out:
        emit_json({"ok": not any(r.level == "fail" for r in results), "counts": doctor.counts(results),
                   "summary": doctor.summary(results), "checks": doctor.as_dicts(results)})
    else:
        table = Table("check", "status", "detail", "fix")
        for r in results:
            # Details and fixes are text, not markup: `pip install 'muninn[ml]'` must keep its brackets.
            table.add_row(escape(r.name), _STYLE[r.level], escape(r.detail), escape(r.fix))
        console.print(table)
        console.print(escape(doctor.summary(results)))
    if any(r.level == "fail" for r in results):
        raise typer.Exit(ExitCode.CHECK_FAILED)
