"""`muninn mcp install --client claude`: put muninn into Claude Code's own files, and take it out again.

Claude Code keeps a stdio server in `mcpServers` of `~/.claude.json` (scope user) or of `.mcp.json` at
a project's root (scope project); hooks in `~/.claude/settings.json`; a person's slash commands in
`~/.claude/commands/NAME.md`. Every file is read, changed in the one place muninn owns, and written
back atomically with everything else in it as it was: a client's config holds the person's other
servers, projects and permissions. A file that is not a JSON object is named and nothing is written.

What is muninn's is found by name (the server `muninn`), by the command (a hook whose command runs
`muninn observe`), or by a marker line (the command file), never by position, so uninstalling after
the person edited the file still removes exactly muninn's entries.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from muninn.core import atomic
from muninn.core.errors import ConfigError

SERVER_NAME = "muninn"
SERVERS = ("mcpServers",)


@dataclass
class Change:
    path: Path
    what: str          # "added muninn to mcpServers", "removed ...", "unchanged"


@dataclass
class Plan:
    """Where Claude Code's files are: `home` is the person's home, `project` a project root or None."""

    home: Path
    project: Path | None = None
    changes: list[Change] = field(default_factory=list)

    @property
    def servers_file(self) -> Path:
        return self.project / ".mcp.json" if self.project is not None else self.home / ".claude.json"


def read_json(path: Path) -> dict[str, Any]:
    """The file's object ({} when it does not exist); anything else is a ConfigError naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"not valid JSON: {exc.msg}", path=str(path), line=exc.lineno,
                          fix="repair the file (muninn changes only its own entries and wrote nothing)") from None
    if not isinstance(data, dict):
        raise ConfigError("expected a JSON object at the top level", path=str(path), line=1,
                          fix="repair the file (muninn changes only its own entries and wrote nothing)")
    return data


def _mode(path: Path) -> int | None:
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return None


def edit_json(path: Path, change: Callable[[dict[str, Any]], str | None], objects: tuple[str, ...] = ()) -> Change:
    """Apply `change` to the file's object and write it back when it says what it did (None: nothing).
    `objects`: top-level keys that must be JSON objects when present (muninn edits inside them)."""
    data = read_json(path)
    for key in objects:
        if key in data and not isinstance(data[key], dict):
            raise ConfigError(f"`{key}` is not a JSON object", path=str(path),
                              fix="repair the file (muninn changes only its own entries and wrote nothing)")
    what = change(data)
    if what is None:
        return Change(path, "unchanged")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", _mode(path))
    return Change(path, what)


def server_entry(command: list[str], args: list[str], env: dict[str, str]) -> dict[str, Any]:
    return {"type": "stdio", "command": command[0], "args": [*command[1:], *args], "env": env}


def set_server(entry: dict[str, Any]) -> Callable[[dict[str, Any]], str | None]:
    def change(data: dict[str, Any]) -> str | None:
        servers = data.setdefault("mcpServers", {})
        if servers.get(SERVER_NAME) == entry:
            return None
        verb = "replaced" if SERVER_NAME in servers else "added"
        servers[SERVER_NAME] = entry
        return f"{verb} the {SERVER_NAME!r} server in mcpServers"
    return change


def drop_server(data: dict[str, Any]) -> str | None:
    servers = data.get("mcpServers")
    if not isinstance(servers, dict) or SERVER_NAME not in servers:
        return None
    del servers[SERVER_NAME]
    return f"removed the {SERVER_NAME!r} server from mcpServers"


def shell_line(env: dict[str, str], command: list[str]) -> str:
    """A command line for a client that runs it through a shell, with the server's environment."""
    return shlex.join(["env", *(f"{k}={v}" for k, v in env.items()), *command])
