"""`muninn ls`: walk an OpenViking tree folder by folder (one recursive listing can stop part-way)."""

from __future__ import annotations

import typer
from rich.table import Table

from muninn.core.client import OpenViking
from muninn.core.cliutil import JsonOpt, console, emit_json, settings

app = typer.Typer()


@app.command("ls")
def ls(
    ctx: typer.Context,
    uri: str = typer.Argument("viking://resources", help="Folder to list."),
    recursive: bool = typer.Option(False, "--recursive", "-r", help="Every file below, folder by folder."),
    json_out: bool = JsonOpt,
) -> None:
    """List a folder as the configured user (`openviking.account`/`openviking.user`).

    With -r it walks folder by folder and counts, the way sync and nightly verify do.
    """
    with OpenViking.user(settings(ctx)) as client:
        entries = list(client.walk(uri)) if recursive else client.ls(uri)
    if json_out:
        emit_json({"uri": uri, "count": len(entries),
                   "entries": [{"uri": e.uri, "dir": e.is_dir, "size": e.size} for e in entries]})
        return
    table = Table("uri", "kind", "size")
    for e in entries:
        table.add_row(e.uri, "dir" if e.is_dir else "file", str(e.size or ""))
    console.print(table)
    console.print(f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}")
