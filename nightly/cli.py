"""`muninn nightly`: for cron. Exit 0 clean, 1 findings or drift, 13 when a job could not run,
14 when another run holds the lock. A JSON report is kept per run. `muninn nightly install` puts
it (and `muninn watch`) on a timer."""

from __future__ import annotations

import typer
from rich.table import Table

from muninn.core.cliutil import JsonOpt, console, emit_json, err_console, say, settings
from muninn.nightly import lock, runner

app = typer.Typer(invoke_without_command=True)

_MARK = {"ok": "[green]ok[/]", "warn": "[yellow]warn[/]", "findings": "[red]FOUND[/]", "error": "[red]ERROR[/]"}


def _table(jobs: list[dict]) -> Table:
    table = Table("job", "status", "detail", "s")
    for r in jobs:
        table.add_row(r["name"], _MARK.get(r.get("status") or "", "?"), r["detail"], f"{r['seconds']:.1f}")
    return table


@app.callback()
def nightly(
    ctx: typer.Context,
    only: list[str] = typer.Option(None, "--only", help="Run just these jobs (repeatable)."),
    last: bool = typer.Option(False, "--last", help="Show the latest saved report instead of running."),
    json_out: bool = JsonOpt,
) -> None:
    """Run the nightly jobs: refresh (secret load, export, sync, every reader's keyword index), repo
    snapshots, ACL drift and stray top-level folders, unapproved skills, the leak gate over every
    exported tree, a leak scan of everything on the server, completeness, verify, backup, the mirror.

    Every job runs even if an earlier one failed; one run at a time (a second exits 14 naming the
    first one's PID). Exit 0 clean (warnings allowed), 1 findings, 13 a job could not run. The report
    is written to <workspace>/nightly/<time>.json. Example crontab line:

        15 3 * * *  muninn nightly --json > /dev/null || notify-owner

    `muninn nightly install --systemd|--cron` writes the timer (and the unit for `muninn watch`).
    """
    if ctx.invoked_subcommand is not None:
        return
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


@app.command("install")
def install(
    ctx: typer.Context,
    cron: bool = typer.Option(False, "--cron", help="Add the lines to your crontab (marked, so a reinstall "
                              "replaces them and leaves your other lines alone)."),
    systemd: bool = typer.Option(False, "--systemd", help="Write systemd user units (a service and a timer for "
                                 "nightly, a service for watch) and enable them."),
    at: str = typer.Option("03:15", "--at", help="Time of day (HH:MM, local time) the nightly run starts."),
    no_start: bool = typer.Option(False, "--no-start", help="systemd: write the units, do not enable them."),
    json_out: bool = JsonOpt,
) -> None:
    """Put `muninn nightly` on a timer, and keep `muninn watch` running (cron: started @reboot).

    Each line or unit carries MUNINN_CONFIG (this config, absolute) and PYTHON_KEYRING_BACKEND, since a
    timer has no session keyring, and runs muninn by an absolute path. `muninn doctor` says whether a
    timer is installed and when nightly last ran clean.
    """
    from muninn.core.cliutil import config_path
    from muninn.core.errors import ConfigError
    from muninn.nightly import timers

    if cron == systemd:
        raise ConfigError("choose one of --cron or --systemd", key="install",
                          fix="e.g. `muninn nightly install --systemd`")
    s = settings(ctx)
    config = config_path(ctx) or s.source_file
    done = timers.install_cron(s, config, at) if cron else timers.install_systemd(s, config, at, not no_start)
    if json_out:
        emit_json(done.to_json())
        return
    # Unwrapped and without markup: paths and command lines are copied from here.
    for text in [*(f"wrote {w}" for w in done.written), *(f"ran {c}" for c in done.ran),
                 *(f"warning: {w}" for w in done.warnings)]:
        err_console.print(text, highlight=False, markup=False, soft_wrap=True)
    for line in done.lines:
        console.print(line, highlight=False, markup=False, soft_wrap=True)
