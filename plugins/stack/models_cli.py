"""`muninn models fetch NAME | list`: weights from the model hub, for machines with a network."""

from __future__ import annotations

import typer
from rich.table import Table

from muninn.core import hub_models as hub
from muninn.core.cliutil import JsonOpt, console, emit_json, say

app = typer.Typer(help="Reranker and embedder weights from the model hub (HF_ENDPOINT honoured), checked "
                  "by sha256 on every use.", no_args_is_help=True)


@app.command("fetch")
def fetch_cmd(
    name: str = typer.Argument(..., help=f"One of: {', '.join(hub.CATALOG)}"),
    force: bool = typer.Option(False, "--force", help="Download again even if the folder is there and verified"),
) -> None:
    """Download a model's files from the hub (huggingface.co, or HF_ENDPOINT) once, with progress on stderr.

    Only the files muninn's loaders read are fetched, into $MUNINN_MODELS/hub (default
    ~/.local/share/muninn/models/hub), with each file's sha256 recorded; the reranker, the embedder and
    `muninn doctor` check them on every use. bge-reranker-v2-m3 is then used by search.rerank.model's
    default id; without it search reranks with the packaged ms-marco cross-encoder and says so.
    Exit 6 when the hub cannot be reached or lacks the files.
    """
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
