"""Is a SQLite file whole? One owner for the checks every local store uses (the keyword index,
the vault): a cheap header check for every open, and SQLite's own page check for doctor."""

from __future__ import annotations

import sqlite3
from pathlib import Path

_MAGIC = b"SQLite format 3\x00"


def header_problem(path: Path) -> str | None:
    """What the file's first 100 bytes say is wrong with it, without opening it as a database:
    empty, not SQLite, or shorter than the page count its header records (a truncated copy)."""
    size = path.stat().st_size
    if size == 0:
        return "0 bytes: truncated"
    with path.open("rb") as fh:
        head = fh.read(100)
    if len(head) < 100 or not head.startswith(_MAGIC):
        return "not a SQLite database"
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(head[28:32], "big")
    # The header's page count is valid only when its version-valid-for equals the change counter.
    if head[24:28] == head[92:96] and size < page_size * pages:
        return f"truncated: {size} of {page_size * pages} bytes"
    return None


def quick_check(path: Path, tables: tuple[str, ...] = ()) -> str | None:
    """The header check, then PRAGMA quick_check (every page) and a count of each of `tables`;
    None when the file is sound."""
    if problem := header_problem(path):
        return problem
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()]
            for table in tables:
                conn.execute(f"SELECT count(*) FROM {table}").fetchone()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return str(exc)
    return None if rows == ["ok"] else "; ".join(rows[:3])


def is_damage(exc: sqlite3.Error) -> bool:
    """SQLITE_CORRUPT or SQLITE_NOTADB: the file is damaged. A constraint, a lock or a bad query
    (IntegrityError, OperationalError) is not, and keeps its own meaning."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or type(exc) is sqlite3.DatabaseError
