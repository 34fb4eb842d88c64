"""What every part's typer sub-app shares: the settings from `--config`, JSON output, the console."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from muninn.core import billing, config, upgrade
from muninn.core.config import Settings


class PlainWhenPiped(Console):
    """A console that, when its file is not a terminal, prints plain text: a table as tab-separated
    lines (header first) instead of box drawing, and no line wrapped at 80 columns, so `use:`/`run:`
    lines and URIs reach a pipe or a file whole."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        if self.is_terminal:
            return super().print(*objects, **kwargs)
        if len(objects) == 1 and isinstance(objects[0], Table):
            # Written as is: rich would expand the tabs into spaces.
            self.file.write(plain_table(objects[0]) + "\n")
            return None
        kwargs["soft_wrap"] = True
        kwargs.pop("width", None)
        return super().print(*objects, **kwargs)

    def on_broken_pipe(self) -> None:
        """The reader went away (`muninn audit 2>&1 | head -1`): rich would exit 1 here; the edge
        (muninn/core/edge.py) treats a closed reader as done, whichever stream it was."""
        self.quiet = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.file.fileno())
        except (OSError, ValueError):
            pass
        raise BrokenPipeError


def _plain(cell: Any) -> str:
    text = cell if isinstance(cell, Text) else Text.from_markup(cell) if isinstance(cell, str) else Text(str(cell))
    return " ".join(text.plain.split())


def plain_table(table: Table) -> str:
    rows = [[_plain(c.header) for c in table.columns]]
    rows += [[_plain(cells[i]) for cells in [c._cells for c in table.columns]] for i in range(table.row_count)]
    lines = ([_plain(table.title)] if table.title else []) + ["\t".join(r) for r in rows]
    return "\n".join(lines)


class Progress:
    """`label i/n item` redrawn in place on stderr while a long command runs, only when stderr is a
    terminal (a pipe, a file or cron gets nothing from it); the summary line is the caller's."""

    def __init__(self, label: str, total: int) -> None:
        self.label, self.total, self.done = label, total, 0
        self.on = sys.stderr.isatty()

    def tick(self, item: str = "") -> None:
        self.done += 1
        if self.on:
            sys.stderr.write(f"\r\x1b[K{self.label} {self.done}/{self.total} {' '.join(item.split())[:60]}")
            sys.stderr.flush()

    def close(self) -> None:
        if self.on:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


console = PlainWhenPiped()
err_console = PlainWhenPiped(stderr=True)

JsonOpt = typer.Option(False, "--json", help="Print one JSON document instead of a table.")


def settings(ctx: typer.Context | None = None) -> Settings:
    """The settings for this invocation, loaded once from the root command's `--config`."""
    root = ctx.find_root() if ctx else None
    obj = root.obj if root and isinstance(root.obj, dict) else {}
    if "settings" not in obj:
        obj["settings"] = config.load(obj.get("config_path"))
        if obj["settings"].embed.max_billed_tokens is not None:
            billing.watch(obj["settings"])     # a refusal at the cap is said as the cause of what fails
        # The first command after an upgrade of muninn upgrades the workspace, or says how.
        upgrade.ensure(obj["settings"].workspace,
                       lambda m: err_console.print(m, highlight=False, markup=False, soft_wrap=True),
                       obj["settings"])
        if root is not None:
            root.obj = obj
    return obj["settings"]


def config_path(ctx: typer.Context) -> Path | None:
    root = ctx.find_root()
    return root.obj.get("config_path") if isinstance(root.obj, dict) else None


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def say(message: str) -> None:
    err_console.print(message, highlight=False)


def renamed(old: str, new: str) -> None:
    """An old spelling still runs; one sentence on stderr names the new one (docs/cli.md, "Renamed")."""
    sys.stderr.write(f"muninn: `{old}` is now `{new}`; the old spelling still works for now.\n")
