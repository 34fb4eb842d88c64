"""`muninn serve`: the warm search process that `muninn search` starts on demand."""

from __future__ import annotations

from pathlib import Path

import typer

from muninn.core.cliutil import say, settings

app = typer.Typer()


@app.command("serve")
def serve_cmd(
    ctx: typer.Context,
    idle: float = typer.Option(None, "--idle", help="Exit after this many seconds without a search "
                               "(default search.serve_idle; 0: run until stopped)."),
    stop: bool = typer.Option(False, "--stop", help="Stop this reader's warm process, if one runs."),
    identity: str = typer.Option(None, "--identity", hidden=True,
                                 help="The identity the starting `muninn search` computed; a mismatch exits 1."),
    profile: str = typer.Option(None, "--profile", "-p", help="Search as this reader of policy.yaml (its key, "
                                "its keyword index, its areas); the hook that recalls before a risky command "
                                "starts one for the assistant's reader."),
    policy: Path = typer.Option(None, "--policy", help="policy.yaml holding --profile (default: the configured one)."),
    warm_up: bool = typer.Option(True, "--warm-up/--no-warm-up", hidden=True,
                                 help="Load the reranker before listening (the risky-command hook skips it)."),
) -> None:
    """Keep this reader's search warm (keyword index, reranker) on a unix socket only you can use.

    `muninn search` starts one on demand and uses it, so a question costs the search, not the model
    load; it exits after search.serve_idle seconds without a search. One process per reader, key and
    muninn.yaml: anything else that changes starts another. Run it yourself to keep it in the
    foreground, or `muninn serve --stop` to end it.
    """
    from muninn.plugins.search import serve

    s = settings(ctx)
    reader = None
    if profile is not None:
        from muninn.core import policy as policy_mod

        reader = policy_mod.load_for(s, policy).profile(profile)
    if stop:
        said = serve.stop(s, reader)
        say("stopped" if said else "no muninn serve runs for this reader")
        return
    if identity is not None and identity != serve.identity(s, reader):
        raise serve.ServeError("this muninn serve would serve another identity than the search that started it",
                               fix="check that both see the same muninn.yaml and MUNINN_ environment")
    raise typer.Exit(serve.serve(s, s.search.serve_idle if idle is None else idle, say, reader, warm_up))
