"""The `muninn` command. It only assembles each part's typer sub-app; nothing imports it.

Errors are translated here and nowhere else: a MuninnError prints one sentence to stderr and
exits with its code (see README, "Exit codes").
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from muninn.core.cliutil import err_console
from muninn.core.errors import MuninnError
from muninn.evals import cli as evals_cli
from muninn.export import cli as export_cli
from muninn.nightly import backup_cli, leak_cli
from muninn.nightly import cli as nightly_cli
from muninn.plugins import doctor_cli, fs_cli, policy_cli, stack_cli
from muninn.plugins.access import inventory_cli, vault_cli, verify_cli
from muninn.plugins.mcp import cli as mcp_cli
from muninn.plugins.search import cli as search_cli

app = typer.Typer(
    name="muninn",
    help="Safe, findable shared memory on OpenViking for an engineer and their AI agents.\n\n"
    "Start with `muninn up` (local stack), then `muninn doctor` (what is missing and how to fix it).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root(
    ctx: typer.Context,
    config: Path = typer.Option(None, "--config", "-c", envvar="MUNINN_CONFIG",
                                help="muninn.yaml to use (default: <XDG config>/muninn/muninn.yaml)."),
) -> None:
    ctx.obj = {"config_path": config.expanduser().resolve() if config else None}


app.add_typer(stack_cli.app)
app.add_typer(stack_cli.server_app, name="server")
app.add_typer(stack_cli.embed_app, name="embed")
app.add_typer(doctor_cli.app)
app.add_typer(fs_cli.app)
app.add_typer(policy_cli.app, name="policy")
app.add_typer(nightly_cli.app)
app.add_typer(leak_cli.app, name="leak")
app.add_typer(backup_cli.app, name="backup")
app.add_typer(evals_cli.app)
app.add_typer(export_cli.app)
app.add_typer(search_cli.app)
app.add_typer(mcp_cli.app)
app.add_typer(mcp_cli.guard_app)
app.add_typer(vault_cli.vault_app, name="vault")
app.add_typer(vault_cli.secret_app, name="secret")
app.add_typer(inventory_cli.app, name="access")
app.add_typer(verify_cli.app)


def main() -> None:
    try:
        # Standalone mode: click reports usage errors itself (exit 2) and turns `typer.Exit(n)`
        # into the exit code; only muninn's own errors are translated here.
        app()
    except MuninnError as err:
        err_console.print(f"[bold red]error:[/] {err}", highlight=False, soft_wrap=True)
        sys.exit(err.exit_code)
