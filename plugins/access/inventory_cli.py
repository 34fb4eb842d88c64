"""`muninn access find | show | exec`."""

from __future__ import annotations

import typer

from muninn.core.cliutil import JsonOpt, console, emit_json, say, settings
from muninn.core.errors import ExitCode

from .inventory import Inventory, block

app = typer.Typer(
    help="How to reach each cluster, host, cloud account or service, and a way to run a command there.\n\n"
    "find → show (the access block) → exec. Prerequisites such as the VPN are checked first; "
    "linked secrets are injected and the output is masked.", no_args_is_help=True)


def _inventory(ctx: typer.Context) -> Inventory:
    return Inventory.open(settings(ctx))


@app.command("find")
def find(ctx: typer.Context, query: list[str] = typer.Argument(..., help="What you want to reach, in words."),
         limit: int = typer.Option(10, "--limit", "-n"), json_out: bool = JsonOpt) -> None:
    """Search ids, names, aliases, tags and notes; print each hit's access block."""
    inv = _inventory(ctx)
    hits = inv.find(" ".join(query), limit=limit)
    if json_out:
        emit_json(hits)
        return
    if not hits:
        say("no inventory entry matches; try an alias, or check `inventory.files` in muninn.yaml")
        raise typer.Exit(ExitCode.CHECK_FAILED)
    for hit in hits:
        console.print(block(inv.get(hit["id"])), highlight=False, markup=False)


@app.command("show")
def show(ctx: typer.Context, entry_id: str = typer.Argument(..., metavar="ID"), json_out: bool = JsonOpt) -> None:
    """The access block: requires, ordered steps, the proof command, linked secrets, last verified."""
    data = _inventory(ctx).show(entry_id)
    if json_out:
        emit_json(data)
        return
    console.print(data["block"], highlight=False, markup=False)
    console.print(f"  run: {data['exec']}", highlight=False, markup=False)


@app.command("exec")
def exec_(
    ctx: typer.Context,
    entry_id: str = typer.Argument(..., metavar="ID"),
    command: list[str] = typer.Argument(..., metavar="-- CMD...", help="The command, after `--`."),
    timeout: float = typer.Option(None, "--timeout", help="Kill the command after this many seconds."),
    stdin: str = typer.Option(None, "--stdin", metavar="SECRET_ID", help="Write this linked secret's value to "
                              "CMD's stdin, for a program that prompts for a password (`sudo -S`)."),
    part: str = typer.Option(None, "--part", help="With --stdin: which part of a multi-part secret."),
) -> None:
    """Check prerequisites, run the setup steps (source, export) and CMD in one bash.

    A `kubectl config use-context` step becomes `--context` on a kubectl CMD. Linked secrets are
    injected, stdout and stderr are masked, and the exit code is CMD's own.
    A down prerequisite stops here with exit 7 and one sentence, e.g.
    `prerequisite 'vpn' is down: connect the VPN and retry`.

    \b
    Examples:
      muninn access exec ops-cluster -- kubectl get nodes
      muninn access exec jira -- bash -c 'curl -s "$JIRA_URL/rest/api/2/myself"'
      muninn access exec web01 --stdin web01-sudo -- sudo -S systemctl status nginx
      muninn access find "ops cluster"      (the ids, then: muninn access show ID)
    """
    result = _inventory(ctx).exec(entry_id, command, timeout=timeout, stdin_secret=stdin, part=part)
    raise typer.Exit(result.exit_code)
