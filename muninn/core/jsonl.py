"""Reading a JSON-lines log that something else appends to: each good record, and the line number of
each line that is not one JSON object (a crash mid-write, a hand edit, a disk that lost a block).
A log reader reports those lines and goes on; it never stops at the first one."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from muninn.core.errors import ConfigError


@dataclass
class Lines:
    numbered: list[tuple[int, dict[str, Any]]] = field(default_factory=list)   # (1-based line, record)
    bad: list[int] = field(default_factory=list)   # 1-based line numbers that were skipped

    @property
    def records(self) -> list[dict[str, Any]]:
        return [r for _, r in self.numbered]


def read(path: Path) -> Lines:
    out = Lines()
    if not path.exists():
        return out
    # split("\n"), not splitlines(): a record is exactly one "\n"-ended line whatever it holds.
    # errors="replace": a torn multi-byte character spoils its line, not the whole file.
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read this log ({exc.strerror or type(exc).__name__})", path=str(path),
                          fix="check its permissions, or move it aside: its writer starts a new one") from None
    for number, line in enumerate(data.decode("utf-8", "replace").split("\n"), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if isinstance(record, dict):
            out.numbered.append((number, record))
        else:
            out.bad.append(number)
    return out
