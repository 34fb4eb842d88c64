"""`muninn up | down | status`, `muninn server install`, `muninn embed serve`."""

from __future__ import annotations

import typer
from rich.table import Table

from muninn.core import registry
from muninn.core.cliutil import JsonOpt, config_path, console, emit_json, renamed, say, settings
from muninn.core.config import Settings
from muninn.core.errors import ExitCode
from muninn.plugins.stack import lifecycle

app = typer.Typer()
server_app = typer.Typer(help="The OpenViking server: the one muninn runs, or a remote one's key.",
                         no_args_is_help=True)
embed_app = typer.Typer(help="The embedding sidecar: the door every embedding call goes through (a local model, "
                        "or a remote or paid provider behind it).", no_args_is_help=True)


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


@server_app.command("key")
def server_key(
    ctx: typer.Context,
    url: str = typer.Option(None, "--url", help="The server (default: server.url, else the local one)."),
    stdin: bool = typer.Option(False, "--stdin", help="Read the key from stdin (scripts); else it is asked for."),
) -> None:
    """Store the root key of an OpenViking server muninn does not run (server.url), after proving it with an
    admin call, in the keyring scope muninn reads it from; then make sure the CLI's own user exists there.

    Then `muninn policy apply` makes every reader's account and key on that server. The key is never an
    argument (shell history) and never written to a file. Exit 5 when the server refuses it (nothing
    stored), 4 for a keyring problem."""
    from muninn.plugins.stack import remote_keys

    s = settings(ctx)
    key = remote_keys.read_key("the server's root key", stdin)
    ensured = remote_keys.set_server_key(s, key, url, say)
    say(f"stored 'openviking:root' for {remote_keys.for_url(s, url).server.base_url}; "
        f"account {ensured.account}/{ensured.user}: {ensured.action}")


@embed_app.command("key")
def embed_key(
    ctx: typer.Context,
    stdin: bool = typer.Option(False, "--stdin", help="Read the key from stdin (scripts); else it is asked for."),
) -> None:
    """Store the embedding provider's API key (embed.provider, embed.upstream) in the keyring. `muninn up`
    hands it to the sidecar as an environment variable: it is never written to ov.conf or any file.
    Run `muninn down && muninn up` for a running sidecar to take a new key."""
    from muninn.plugins.stack import remote_keys

    s = settings(ctx)
    name = remote_keys.set_provider_key(s, remote_keys.read_key("the embedding provider's API key", stdin))
    say(f"stored {name!r} in the keyring ({s.embed.provider} at {s.embed.upstream or 'no embed.upstream set'})")


@embed_app.command("fetch", hidden=True)
def embed_fetch(ctx: typer.Context, model: str = typer.Argument(None)) -> None:
    """The old spelling of `muninn models fetch intfloat/e5-small-v2`."""
    from muninn.plugins.embed import fetch

    renamed("embed fetch", "models fetch")
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
    To e5: `muninn models fetch intfloat/e5-small-v2`, then `muninn embed migrate --to intfloat/e5-small-v2`.
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
    serve(s.embed, host=host, port=port, warm_second=s.second_embed is not None, billed=s.paths.billed_tokens)
