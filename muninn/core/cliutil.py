"""What every part's typer sub-app shares: the settings from `--config`, JSON output, the console."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from muninn.core import config, upgrade
from muninn.core.config import Settings

console = Console()
err_console = Console(stderr=True)

JsonOpt = typer.Option(False, "--json", help="Print one JSON document instead of a table.")


def settings(ctx: typer.Context | None = None) -> Settings:
    """The settings for this invocation, loaded once from the root command's `--config`."""
    root = ctx.find_root() if ctx else None
    obj = root.obj if root and isinstance(root.obj, dict) else {}
    if "settings" not in obj:
        obj["settings"] = config.load(obj.get("config_path"))
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
