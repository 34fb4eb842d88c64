"""The access log: one JSON line per find, show, get, exec (and access exec), never a value.

`<workspace>/logs/access.jsonl`, created 0600, appended a line at a time. Every free-text field
(the command, a find's query, a refusal) is scrubbed before it is written, in case someone typed a
value on the line: with the caller's scrubber (known values and patterns) when it has one, else
with the patterns. `who` is what muninn knows, never what the caller's environment says.
"""

from __future__ import annotations

import json
import os
import pwd
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from muninn.core import jsonl
from muninn.guards.redact.redactor import Redactor

_LOCK = threading.Lock()


Scrub = Callable[[str], str]
# Fields muninn sets itself; every other string was typed by whoever called.
_OURS = frozenset({"time", "who", "action", "id", "exit_code", "ids", "masked"})


def default_who() -> str:
    """The OS user this process runs as, from the kernel's uid: not $USER, $LOGNAME or $MUNINN_WHO,
    which the caller sets. The MCP server passes `mcp:<profile>` explicitly instead."""
    return pwd.getpwuid(os.getuid()).pw_name


@cache
def _patterns() -> Redactor:
    return Redactor({})


def patterns_only(text: str) -> str:
    return _patterns().redact(text).text


def _scrubbed(value: Any, scrub: Scrub) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list | tuple):
        return [_scrubbed(v, scrub) for v in value]
    return value


def write(path: Path, *, who: str, action: str, secret_id: str | None = None, command: str | None = None,
          exit_code: int | None = None, scrub: Scrub | None = None, **extra: Any) -> None:
    line = {"time": datetime.now(UTC).isoformat(timespec="milliseconds"), "who": who, "action": action,
            "id": secret_id, "command": command, "exit_code": exit_code, **extra}
    clean = scrub or patterns_only
    line = {k: v if k in _OURS else _scrubbed(v, clean) for k, v in line.items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (json.dumps(line, sort_keys=True) + "\n").encode()
    with _LOCK:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)


def read_lines(path: Path) -> jsonl.Lines:
    """Every record, and the numbers of the lines that are not one (`muninn audit` reports them)."""
    return jsonl.read(path)


def read(path: Path) -> list[dict]:
    return read_lines(path).records
