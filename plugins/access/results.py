"""Stored verify results, so `access show` and `secret show` can say "last verified: ok 2h ago".

One SQLite table keyed by (kind, id): the latest result only; the sweep's JSON report is the history.
"""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from muninn.core.config import Settings

STATUSES = ("ok", "stale", "unreachable", "missing", "skipped", "failed")


@dataclass
class Result:
    kind: str  # "inventory" or "secret"
    id: str
    status: str
    reason: str
    command: str = ""
    checked_at: str = ""
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return asdict(self)


class ResultStore:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path, check_same_thread=False)
        self.db.execute("CREATE TABLE IF NOT EXISTS results (kind TEXT, id TEXT, status TEXT, reason TEXT, "
                        "command TEXT, checked_at TEXT, seconds REAL, PRIMARY KEY (kind, id))")

    @classmethod
    def open(cls, settings: Settings) -> ResultStore:
        return cls(settings.paths.verify_results)

    def save(self, results: list[Result]) -> None:
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?)",
                                [(r.kind, r.id, r.status, r.reason, r.command, r.checked_at, r.seconds)
                                 for r in results])

    def last(self, kind: str, item_id: str) -> Result | None:
        row = self.db.execute("SELECT kind, id, status, reason, command, checked_at, seconds FROM results "
                              "WHERE kind = ? AND id = ?", (kind, item_id)).fetchone()
        return Result(*row) if row else None

    def close(self) -> None:
        self.db.close()


def ago(when: str, now: datetime | None = None) -> str:
    """'2h ago' style age of an ISO timestamp."""
    now = now or datetime.now(UTC)
    seconds = max(0, int((now - datetime.fromisoformat(when)).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


def last_verified_line(settings: Settings, kind: str, item_id: str) -> str:
    """'last verified: ok 2h ago (reason)' or 'last verified: never'."""
    store = ResultStore.open(settings)
    try:
        result = store.last(kind, item_id)
    finally:
        store.close()
    if result is None:
        return "last verified: never (run `muninn verify`)"
    return f"last verified: {result.status} {ago(result.checked_at)} ({result.reason})"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
