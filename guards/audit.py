"""The audit log: one JSON line per guarded call.

Each line holds the time, profile, tool, the arguments (every string passed through the caller's
redactor and capped, so no secret value or whole observation lands in the log), the decision,
the reason and the duration. The file is created 0600 and appended to line by line: a crash
loses at most the call in flight, and concurrent servers never interleave within a line.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

MAX_VALUE_CHARS = 200

Scrub = Callable[[str], str]


def redact_arguments(arguments: Any, scrub: Scrub, cap: int = MAX_VALUE_CHARS) -> Any:
    """Arguments with every string scrubbed and capped; structure, numbers and booleans are kept."""
    if isinstance(arguments, dict):
        return {str(k): redact_arguments(v, scrub, cap) for k, v in arguments.items()}
    if isinstance(arguments, list | tuple):
        return [redact_arguments(v, scrub, cap) for v in arguments]
    if isinstance(arguments, str):
        text = scrub(arguments)
        return text if len(text) <= cap else text[:cap] + f"…[{len(text) - cap} more chars]"
    if arguments is None or isinstance(arguments, bool | int | float):
        return arguments
    return f"<{type(arguments).__name__}>"


class AuditLog:
    def __init__(self, path: Path, scrub: Scrub) -> None:
        self.path = path
        self.scrub = scrub
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def record(self, *, profile: str, tool: str, arguments: Any, decision: str, reason: str,
               duration_ms: float) -> dict[str, Any]:
        line = {
            "ts": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "profile": profile,
            "tool": tool,
            "arguments": redact_arguments(arguments, self.scrub),
            "decision": decision,
            "reason": self.scrub(reason),
            "duration_ms": round(duration_ms, 3),
        }
        data = (json.dumps(line, ensure_ascii=False) + "\n").encode()
        with self._lock:
            os.write(self._fd, data)  # one write per line: O_APPEND keeps lines whole
        return line

    def close(self) -> None:
        os.close(self._fd)


def read(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
