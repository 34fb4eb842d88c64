"""`muninn policy apply | check`."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from muninn.core import policy as policy_mod
from muninn.core.cliutil import JsonOpt, console, emit_json, say, settings
from muninn.core.errors import ExitCode
from muninn.plugins import policy_apply

app = typer.Typer(help="Make policy.yaml true on the server (accounts, keys, ACLs) and check for drift.\n\n"
                  "\b\nExamples:\n"
                  "  muninn policy apply                 (create accounts, users, keys, areas and ACLs)\n"
                  "  muninn policy check --json          (read-only: exit 1 on drift, naming each entry)\n"
                  "  muninn policy apply --policy ./policy.yaml",
                  no_args_is_help=True)

PolicyOpt = typer.Option(None, "--policy", help="policy.yaml (default: guard.policy in muninn.yaml)")


def _table(states: list[policy_apply.AreaState]) -> Table:
    table = Table("account", "area", "uri", "state", "detail")
    for s in states:
        table.add_row(s.account, s.area, s.uri, "[green]ok[/]" if s.ok else "[red]DRIFT[/]", s.describe())
    return table


@app.command("apply")
def apply_cmd(ctx: typer.Context, policy: Path = PolicyOpt, json_out: bool = JsonOpt) -> None:
    """Create the readers' accounts and users (safe to re-run: working keys are kept), store their keys
    in the keyring and prove each with a call, turn ACLs on, set every area's ACL, wait, and read the
    effective ACL back. Exit 1 if any area does not match the policy afterwards."""
    s = settings(ctx)
    pol = policy_mod.load_for(s, policy)
    report = policy_apply.apply(s, pol, say=say)
    emit_json(report.as_dict()) if json_out else console.print(_table(report.areas))
    if not report.ok:
        raise typer.Exit(ExitCode.CHECK_FAILED)


@app.command("check")
def check_cmd(ctx: typer.Context, policy: Path = PolicyOpt, json_out: bool = JsonOpt) -> None:
    """Read-only: compare each area's effective ACL on the server with the policy. Exit 1 on drift."""
    s = settings(ctx)
    pol = policy_mod.load_for(s, policy)
    states = policy_apply.drift(s, pol)
    if json_out:
        emit_json({"ok": all(x.ok for x in states),
                   "areas": [{**policy_apply.asdict(x), "ok": x.ok, "detail": x.describe()} for x in states]})
    else:
        console.print(_table(states))
    if not all(x.ok for x in states):
        raise typer.Exit(ExitCode.CHECK_FAILED)
