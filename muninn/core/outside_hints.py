"""Entries `muninn init` and `muninn doctor` suggest for muninn.yaml's `outside:` from the variables seed 001
names for its tools: CORTEX_VAULT (cortex, the vault folder; its index is .cortex/index.db in it), SCOUT_DB,
LENS_DB (the database files) and HQ_URL (agent-hq's team memory). Text for the owner to paste: the variables
are never read when a search runs (the MCP server's environment is a file an agent can edit)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from muninn.core.config import Settings

# variable -> (name seed 001 gives the memory, preset, file below the variable's folder or "")
SQLITE = {"CORTEX_VAULT": ("brain", "cortex", ".cortex/index.db"), "SCOUT_DB": ("reading", "scout", ""),
          "LENS_DB": ("code", "lens", "")}
HTTP = ("HQ_URL", "team")


def suggestions(settings: Settings | None = None, environ: Mapping[str, str] | None = None) -> list[str]:
    """One YAML list item per variable that is set and names something muninn.yaml does not declare yet."""
    env = os.environ if environ is None else environ
    declared = list(settings.outside) if settings is not None else []
    names = {o.name for o in declared}
    paths = {str(settings.paths.resolve(o.path)) for o in declared if o.path} if settings is not None else set()
    urls = {o.url for o in declared if o.url}
    out = []
    for var, (name, preset, below) in SQLITE.items():
        if not (value := env.get(var)):
            continue
        path = Path(value).expanduser() / below if below else Path(value).expanduser()
        if name not in names and str(path) not in paths:
            out.append(f"- {{name: {name}, kind: sqlite, preset: {preset}, path: {path}}}")
    var, name = HTTP
    if (url := env.get(var)) and url not in urls and name not in names:
        out.append(f"- {{name: {name}, kind: http, url: {url}}}")
    return out
