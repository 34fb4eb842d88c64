"""`muninn policy apply | check | show`."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from muninn.core import policy as policy_mod
from muninn.core import registry
from muninn.core.cliutil import JsonOpt, console, emit_json, say, settings
from muninn.core.errors import ExitCode
from muninn.plugins.stack import policy_apply, policy_show

app = typer.Typer(help="Make policy.yaml true on the server (accounts, keys, ACLs) and check for drift.\n\n"
                  "\b\nExamples:\n"
                  "  muninn policy apply                 (create accounts, users, keys, areas and ACLs)\n"
                  "  muninn policy check --json          (read-only: exit 1 on drift, naming each entry)\n"
                  "  muninn policy show                  (which area decides where, each reader's level)\n"
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
    """Read-only: compare each area's effective ACL on the server with the policy, and each reader's
    local keyword index with what the policy lets it read. Exit 1 on drift or on a file an index may
    not hold."""
    s = settings(ctx)
    pol = policy_mod.load_for(s, policy)
    states = policy_apply.drift(s, pol)
    leaks = [leak for check in registry.store_leaks() for leak in check(s, pol)]
    ok = all(x.ok for x in states) and not leaks
    if json_out:
        emit_json({"ok": ok,
                   "areas": [{**policy_apply.asdict(x), "ok": x.ok, "detail": x.describe()} for x in states],
                   "indexes": leaks})
    else:
        console.print(_table(states))
        for leak in leaks:
            say(f"reader {leak['reader']}: its keyword index {leak['index']} holds {leak['files']} file(s) its "
                f"policy does not let it read (e.g. {leak['examples'][0]}): run `{leak['fix']}`")
    if not ok:
        raise typer.Exit(ExitCode.CHECK_FAILED)


@app.command("show")
def show_cmd(ctx: typer.Context, policy: Path = PolicyOpt, json_out: bool = JsonOpt) -> None:
    """For every area, in each account: the area whose ACL decides there (the deepest one some reader of
    the account lists, as on the server) and each reader's level. Then each outside memory of muninn.yaml:
    which readers may query it, and to which it is invisible (a reader's `outside:` names it or not).
    Local: no server call."""
    s = settings(ctx)
    pol = policy_mod.load_for(s, policy)
    found = policy_show.rows(pol)
    outside = policy_show.outside_rows(s, pol)
    if json_out:
        emit_json({"policy": str(pol.path), "areas": [r.as_dict() for r in found],
                   "outside": [r.as_dict() for r in outside]})
        return
    table = Table("account", "area", "uri", "decided by", "levels")
    for r in found:
        levels = ", ".join(f"{n} {lv or 'none'}" for n, lv in r.levels.items())
        table.add_row(r.account, r.area, r.uri, policy_show.describe(r), levels)
    console.print(table)
    if outside:
        more = Table("outside memory", "kind", "labelled", "readers")
        for o in outside:
            more.add_row(o.name, o.kind, "trusted" if o.trusted else "untrusted",
                         ", ".join(f"{n} {how}" for n, how in o.readers.items()))
        console.print(more)
