"""Real FTS5 databases in the schemas of the tools seed 001 federates, as their own code creates them
(the DDL of tools-for-agents/{cortex,scout,lens} src/db.js; commits in muninn/plugins/search/outside/presets.py),
and a team memory server in agent-hq's published /api/memory shape. agent-hq is on no package registry,
so the server is this one, written to its shape (src/services.js Memory.search): a JSON list of
{id, agent_id, namespace, title, content, tags, importance, created_at, updated_at}, `q` one LIKE."""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar
from urllib.parse import parse_qs, urlparse

CORTEX = """
CREATE TABLE IF NOT EXISTS notes (slug TEXT PRIMARY KEY, title TEXT, path TEXT, type TEXT, tags TEXT, aliases TEXT,
  created TEXT, updated TEXT, mtime INTEGER, body TEXT);
CREATE TABLE IF NOT EXISTS links (src TEXT NOT NULL, target TEXT NOT NULL, dst TEXT, PRIMARY KEY (src, target));
CREATE VIRTUAL TABLE IF NOT EXISTS notes_fts USING fts5(slug UNINDEXED, title, tags, body,
  tokenize = 'porter unicode61');
"""
SCOUT = """
CREATE TABLE IF NOT EXISTS pages (url TEXT PRIMARY KEY, final_url TEXT, title TEXT, description TEXT, markdown TEXT,
  content_type TEXT, status INTEGER, html_bytes INTEGER, md_bytes INTEGER, fetched_at TEXT);
CREATE VIRTUAL TABLE IF NOT EXISTS pages_fts USING fts5(url UNINDEXED, title, markdown, tokenize = 'porter unicode61');
"""
LENS = """
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, lang TEXT, lines INTEGER, bytes INTEGER, mtime INTEGER,
  indexed_at TEXT);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks USING fts5(path, body, lang UNINDEXED, start UNINDEXED, "end" UNINDEXED,
  tokenize = 'porter unicode61');
"""


def _open(path: Path, ddl: str) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode = WAL")   # as each tool opens its index
    con.executescript(ddl)
    return con


def cortex(path: Path, notes: list[tuple[str, str, str, str]]) -> Path:
    """notes: (slug, title, updated, body)."""
    con = _open(path, CORTEX)
    for slug, title, updated, body in notes:
        con.execute("INSERT INTO notes (slug, title, path, type, tags, updated, body) VALUES (?,?,?,?,?,?,?)",
                    (slug, title, f"{slug}.md", "note", "[]", updated, body))
        con.execute("INSERT INTO notes_fts (slug, title, tags, body) VALUES (?,?,?,?)", (slug, title, "", body))
    con.commit()
    con.close()
    return path


def scout(path: Path, pages: list[tuple[str, str, str, str]]) -> Path:
    """pages: (url, title, fetched_at, markdown)."""
    con = _open(path, SCOUT)
    for url, title, fetched, md in pages:
        con.execute("INSERT INTO pages (url, title, markdown, fetched_at) VALUES (?,?,?,?)", (url, title, md, fetched))
        con.execute("INSERT INTO pages_fts (url, title, markdown) VALUES (?,?,?)", (url, title, md))
    con.commit()
    con.close()
    return path


def lens(path: Path, chunks: list[tuple[str, int, int, str]]) -> Path:
    """chunks: (path, start, end, body)."""
    con = _open(path, LENS)
    for file, start, end, body in chunks:
        con.execute("INSERT OR IGNORE INTO files (path, lang, indexed_at) VALUES (?,?,?)",
                    (file, "python", "2026-11-01T10:00:00Z"))
        con.execute('INSERT INTO chunks (path, body, lang, start, "end") VALUES (?,?,?,?,?)',
                    (file, body, "python", start, end))
    con.commit()
    con.close()
    return path


def custom(path: Path, rows: list[tuple[str, str]]) -> Path:
    """Some other tool's index: docs(id, heading, text) + docs_fts(heading, text, content=docs)."""
    con = sqlite3.connect(path)
    con.executescript("CREATE TABLE docs (id INTEGER PRIMARY KEY, heading TEXT, text TEXT);"
                      "CREATE VIRTUAL TABLE docs_fts USING fts5(heading, text, content='docs', content_rowid='id');")
    for heading, text in rows:
        cur = con.execute("INSERT INTO docs (heading, text) VALUES (?,?)", (heading, text))
        con.execute("INSERT INTO docs_fts (rowid, heading, text) VALUES (?,?,?)", (cur.lastrowid, heading, text))
    con.commit()
    con.close()
    return path


CUSTOM_QUERY = ("SELECT d.heading AS title, CAST(d.id AS TEXT) AS ref, 'doc' AS meta, d.text AS excerpt, "
                "bm25(docs_fts) AS score FROM docs_fts JOIN docs d ON d.id = docs_fts.rowid "
                "WHERE docs_fts MATCH ? ORDER BY score LIMIT ?")
CUSTOM_READ = "SELECT text FROM docs WHERE id = CAST(? AS INTEGER)"
CUSTOM_COUNT = "SELECT COUNT(*) FROM docs"


def unknown_tokenizer(path: Path) -> Path:
    """A cortex index whose FTS table names a tokenizer this SQLite does not have (a tool that loads its own)."""
    cortex(path, [("a", "A", "2026-01-01", "alpha")])
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode = DELETE")
    con.execute("PRAGMA writable_schema = ON")
    con.execute("UPDATE sqlite_master SET sql = replace(sql, 'porter unicode61', 'jieba') WHERE name = 'notes_fts'")
    con.commit()
    con.close()
    return path


# --- the team memory, in agent-hq's shape ---

class _Handler(BaseHTTPRequestHandler):
    memories: ClassVar[list[dict]] = []
    delay = 0.0
    key = ""     # set: a request without `Authorization: Bearer <key>` is answered 401

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        url = urlparse(self.path)
        if url.path != "/api/memory":
            self.send_error(404)
            return
        time.sleep(self.delay)
        if self.key and self.headers.get("Authorization") != f"Bearer {self.key}":
            self.send_error(401)
            return
        q = parse_qs(url.query).get("q", [""])[0].lower()
        limit = int(parse_qs(url.query).get("limit", ["25"])[0])
        rows = [m for m in self.memories if not q or q in m["title"].lower() or q in m["content"].lower()]
        rows.sort(key=lambda m: (-m["importance"], m["updated_at"]), reverse=False)
        body = json.dumps(rows[:limit]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def serve(port: int, memories_file: str, delay: float, key: str = "") -> None:
    _Handler.memories = json.loads(Path(memories_file).read_text())
    _Handler.delay = delay
    _Handler.key = key
    ThreadingHTTPServer(("127.0.0.1", port), _Handler).serve_forever()


if __name__ == "__main__":
    serve(int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), *sys.argv[4:5])
