"""The access log: one JSON line per find, show, get, exec (and access exec), never a value.

`<workspace>/logs/access.jsonl`, created 0600, appended a line at a time. Commands are masked
with the vault redactor before they are written, in case someone typed a value on the line.
"""

from __future__ import annotations

import getpass
import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

_LOCK = threading.Lock()


def default_who() -> str:
    """Who is asking: `$MUNINN_WHO` (the MCP server sets its profile there), else the OS user."""
    return os.environ.get("MUNINN_WHO") or getpass.getuser()


def write(path: Path, *, who: str, action: str, secret_id: str | None = None, command: str | None = None,
          exit_code: int | None = None, **extra: Any) -> None:
    line = {"time": datetime.now(UTC).isoformat(timespec="milliseconds"), "who": who, "action": action,
            "id": secret_id, "command": command, "exit_code": exit_code, **extra}
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (json.dumps(line, sort_keys=True) + "\n").encode()
    with _LOCK:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)


def read(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
