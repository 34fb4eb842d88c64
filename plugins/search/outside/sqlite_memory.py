"""An SQLite FTS5 index of another tool, opened read-only where it lies.

`file:…?mode=ro`: SQLite refuses every write, and the connection lives for one question (opened, asked,
closed), so it never holds a lock past that. A WAL database needs its `-shm` file: in a folder muninn may
not write, a database its owner closed cleanly (no `-wal` left, or an empty one) is opened `immutable=1`
instead, which reads the file as it is without locking; with a non-empty `-wal` there, `immutable` would
read stale pages, so it is skipped and says why. Every failure is one line: missing file, wrong schema,
unknown tokenizer, not a database.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

BUSY_MS = 200     # a writer mid-commit: wait this long, then skip rather than stall the search


class Unavailable(Exception):
    """One line saying why this memory is skipped."""


@dataclass(frozen=True)
class Row:
    title: str
    ref: str
    meta: str
    text: str
    score: float
    date: str | None


def match_expression(query: str) -> str | None:
    """Each word of the query as a quoted FTS5 term, OR'ed (as seed 001): the owner's tokenizer decides."""
    terms = list(dict.fromkeys(re.findall(r"\w+", query)))[:12]
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms) if terms else None


def _uri(path: Path, immutable: bool) -> str:
    return f"file:{quote(str(path))}?{'immutable=1' if immutable else 'mode=ro'}"


def _why(exc: sqlite3.Error) -> str:
    text = str(exc)
    low = text.lower()
    if "tokenizer" in low:
        return f"unknown tokenizer ({text})"
    if "no such table" in low or "no such column" in low or "no such function" in low:
        return f"wrong schema ({text})"
    if "not a database" in low or "malformed" in low or "corrupt" in low:
        return f"not a readable database ({text})"
    if "locked" in low or "busy" in low:
        return f"busy: its owner holds a write lock ({text})"
    return text


def connect(path: Path) -> sqlite3.Connection:
    """A read-only connection, or Unavailable with the reason."""
    if not path.is_file():
        raise Unavailable(f"no database at {path}")
    try:
        con = sqlite3.connect(_uri(path, immutable=False), uri=True, timeout=BUSY_MS / 1000,
                              check_same_thread=False)
        con.execute("PRAGMA query_only = 1")
        con.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return con
    except sqlite3.OperationalError as exc:
        # What SQLite says when it cannot make the -shm it needs: "unable to open", or (since 3.22) a
        # read-only WAL database it cannot initialise, "attempt to write a readonly database".
        if not any(w in str(exc).lower() for w in ("unable to open", "readonly database")):
            raise Unavailable(_why(exc)) from None
    except sqlite3.DatabaseError as exc:
        raise Unavailable(_why(exc)) from None
    # mode=ro could not open its -shm: a WAL database in a folder muninn cannot write.
    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise Unavailable(f"its write-ahead log {wal.name} holds changes its owner has not checkpointed, in a "
                          "folder muninn may not write: open it once with its own tool, or make the folder "
                          "readable and writable for this user")
    try:
        con = sqlite3.connect(_uri(path, immutable=True), uri=True, check_same_thread=False)
        con.execute("PRAGMA query_only = 1")
        con.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return con
    except sqlite3.DatabaseError as exc:
        raise Unavailable(_why(exc)) from None


def search(path: Path, sql: str, query: str, limit: int) -> list[Row]:
    expr = match_expression(query)
    if expr is None:
        return []
    con = connect(path)
    try:
        cur = con.execute(sql, (expr, limit))
        names = [d[0] for d in cur.description or ()]
        missing = {"title", "ref", "excerpt", "score"} - set(names)
        if missing:
            raise Unavailable(f"wrong schema: the query returns no {', '.join(sorted(missing))} column")
        out = []
        for values in cur.fetchall():
            r = dict(zip(names, values, strict=True))
            out.append(Row(title=str(r["title"] or ""), ref=str(r["ref"] or ""), meta=str(r.get("meta") or ""),
                           text=str(r["excerpt"] or ""), score=float(r["score"] or 0.0),
                           date=str(r["date"]) if r.get("date") else None))
        return out
    except sqlite3.Error as exc:
        raise Unavailable(_why(exc)) from None
    finally:
        con.close()


def one(path: Path, sql: str, args: tuple = ()) -> object:
    """The first column of the first row (a count, a whole text), or None."""
    con = connect(path)
    try:
        row = con.execute(sql, args).fetchone()
        return row[0] if row else None
    except sqlite3.Error as exc:
        raise Unavailable(_why(exc)) from None
    finally:
        con.close()
