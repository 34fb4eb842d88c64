"""Keyword candidates: BM25 over the same fact files, in a local SQLite FTS5 index.

The index is fed two ways: `index_facts(db_path, files)` from the export/sync step (the files it
has just written), or `build_from_openviking(client, root, db_path)`, which walks the server with
one identity's key. It holds one identity's view: build it with the key of the reader who
searches it. Unchanged files (same content hash) are skipped, so re-indexing is cheap.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from muninn.core import sqlitefile
from muninn.core.errors import ExitCode, MuninnError, NotFound
from muninn.plugins.search import doc as docmod
from muninn.plugins.search import windows
from muninn.plugins.search.types import Candidate

if TYPE_CHECKING:
    from muninn.core.client import OpenViking

DOCS = """
CREATE TABLE IF NOT EXISTS docs (
    id INTEGER PRIMARY KEY, uri TEXT UNIQUE NOT NULL, content_hash TEXT NOT NULL, date TEXT, source TEXT,
    text TEXT NOT NULL
);
"""
FTS = """
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    uri UNINDEXED, title, breadcrumb, body, context, tokenize = 'porter unicode61'
);
"""
# Title and breadcrumb say what a fact is about; a hit there counts for more than one in the body.
# Neighbouring context (doc.CONTEXT_MARKER) counts for less: it is why a file is found, not what
# it says. On LoCoMo dev, context in the body at full weight gave BM25 hit@4 0.621, at 0.3 0.692.
BM25 = "bm25(fts, 0.0, 3.0, 2.0, 1.0, 0.3)"
MAX_TEXT = 20_000
# PRAGMA user_version of the current layout: fts has a context column, and each fts row has the id
# of its docs row (an INTEGER PRIMARY KEY, so VACUUM keeps it): a file is updated or removed by rowid.
# uri is UNINDEXED in fts, and deleting by uri scanned the table once per file: indexing 10,000 files
# took 15.6 s instead of 0.3 s (evals/results/search.md).
# Layout 3 re-reads each row's date and source through the fact file's owner: files the MCP remember
# tool wrote before workspace format 1 carry `observed_at` and no `date`, and were indexed undated.
LAYOUT = 3
# FTS5 keeps new terms in memory up to this size, then writes them as one segment and merges segments
# in levels. At its 1 MB default a 100,000-file build wrote ~240 segments and spent a third of its
# SQLite time merging them again (evals/results/scale.md); 16 MB writes a few large ones. Memory is
# only used by a build that big: a file added by `recall_remember` fills a few KB of it.
HASH_SIZE: int | None = 16 << 20


class KeywordIndexError(MuninnError):
    """The keyword index file is missing or unreadable."""

    exit_code = ExitCode.SEARCH_CONTRACT


class IndexDamaged(KeywordIndexError):
    """The index file is damaged (truncated, overwritten, not SQLite): searches carry on vector-only
    and say so; `muninn search-index --rebuild` moves it aside and builds a new one."""


def damaged(path: Path, detail: str) -> IndexDamaged:
    return IndexDamaged(f"keyword index {path} is damaged ({detail})",
                        fix="run `muninn search-index --rebuild` to move it aside and rebuild it from the server")


def quick_check(path: Path) -> str | None:
    """SQLite's own check of every page, and both tables readable; None when the file is sound."""
    return sqlitefile.quick_check(path, ("docs", "fts"))


def move_aside(path: Path) -> Path | None:
    """Rename the index (and its journal and vector cache) to `<name>.damaged-<UTC time>`: kept for
    a post-mortem, out of the way of a rebuild. None when there was nothing to move."""
    if not path.exists():
        return None
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    aside = path.with_name(f"{path.name}.damaged-{stamp}")
    for extra in ("-journal", "-wal", "-shm"):
        Path(f"{path}{extra}").unlink(missing_ok=True)
    path.rename(aside)
    return aside


@dataclass
class IndexStats:
    indexed: int = 0
    unchanged: int = 0
    removed: int = 0


@contextmanager
def _damage_named(path: Path) -> Iterator[None]:
    """SQLite's "malformed" / "not a database" anywhere in the block as IndexDamaged (one sentence
    with the repair), not a traceback; an OperationalError (locked, bad query) stays what it is."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        if not sqlitefile.is_damage(exc):
            raise
        raise damaged(path, str(exc)) from None


def connect(db_path: Path | str) -> sqlite3.Connection:
    """The index, opened (and created or migrated); IndexDamaged for a damaged file, never a
    silently empty index in its place."""
    path = Path(db_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and (problem := sqlitefile.header_problem(path)):
        raise damaged(path, problem)
    with _damage_named(path):
        return _connect(path)


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, check_same_thread=False)
    columns = [r[1] for r in conn.execute("PRAGMA table_info(docs)")]
    if columns and "id" not in columns:
        # docs keyed by uri alone (layout 1): the same rows, now with a stable id. One explicit
        # transaction (sqlite3 would autocommit the DDL): a crash half-way leaves the old table.
        conn.execute("BEGIN")
        try:
            conn.execute("ALTER TABLE docs RENAME TO docs_v1")
            conn.execute(DOCS)
            conn.execute("INSERT INTO docs (uri, content_hash, date, source, text) "
                         "SELECT uri, content_hash, date, source, text FROM docs_v1")
            conn.execute("DROP TABLE docs_v1")
        except BaseException:
            conn.rollback()
            raise
        conn.commit()
    conn.execute(DOCS)
    if conn.execute("PRAGMA user_version").fetchone()[0] < LAYOUT:
        _rebuild_fts(conn)     # an index from before this layout: rebuilt from its own rows
    return conn


def _rebuild_fts(conn: sqlite3.Connection) -> None:
    with conn:
        conn.execute("DROP TABLE IF EXISTS fts")
        conn.executescript(FTS)
        for rowid, uri, text in conn.execute("SELECT rowid, uri, text FROM docs").fetchall():
            d = docmod.parse(uri, text)
            conn.execute("UPDATE docs SET date = ?, source = ? WHERE rowid = ?",
                         (d.date.isoformat() if d.date else None, d.source, rowid))
            _insert_fts(conn, rowid, d)
        conn.execute(f"PRAGMA user_version = {LAYOUT}")


def _insert_fts(conn: sqlite3.Connection, rowid: int, d: docmod.Doc) -> None:
    conn.execute("INSERT INTO fts (rowid, uri, title, breadcrumb, body, context) VALUES (?, ?, ?, ?, ?, ?)",
                 (rowid, d.uri, d.title, d.breadcrumb, d.fact, d.context))


def _rowids(conn: sqlite3.Connection, uris: list[str]) -> dict[int, str]:
    """{rowid: uri} through the docs table's primary key (fts rows share the docs rowid)."""
    marks = ", ".join("?" for _ in uris)
    return dict(conn.execute(f"SELECT rowid, uri FROM docs WHERE uri IN ({marks})", uris).fetchall())


def _items(files: Mapping[str, str] | Iterable[tuple[str, str]]) -> Iterable[tuple[str, str]]:
    return files.items() if isinstance(files, Mapping) else files


def index_facts(db_path: Path | str, files: Mapping[str, str] | Iterable[tuple[str, str]]) -> IndexStats:
    """Add or update fact files, given as {viking URI: file content}. Returns what changed."""
    stats = IndexStats()
    with _damage_named(Path(db_path)), connect(db_path) as conn:
        _hash_size(conn)
        for uri, text in _items(files):
            d = docmod.parse(uri, text[:MAX_TEXT])
            row = conn.execute("SELECT rowid, content_hash FROM docs WHERE uri = ?", (uri,)).fetchone()
            if row and row[1] == d.content_hash:
                stats.unchanged += 1
                continue
            values = (d.content_hash, d.date.isoformat() if d.date else None, d.source, d.text)
            if row:
                rowid = row[0]
                conn.execute("DELETE FROM fts WHERE rowid = ?", (rowid,))
                conn.execute("UPDATE docs SET content_hash = ?, date = ?, source = ?, text = ? WHERE rowid = ?",
                             (*values, rowid))
            else:
                rowid = conn.execute("INSERT INTO docs (uri, content_hash, date, source, text) "
                                     "VALUES (?, ?, ?, ?, ?)", (uri, *values)).lastrowid
            _insert_fts(conn, rowid, d)
            stats.indexed += 1
    conn.close()
    return stats


def _hash_size(conn: sqlite3.Connection) -> None:
    """FTS5's in-memory term buffer (see HASH_SIZE), written to its config table once per index."""
    if HASH_SIZE is None:
        return
    row = conn.execute("SELECT v FROM fts_config WHERE k = 'hashsize'").fetchone()
    if row is None or row[0] != HASH_SIZE:
        conn.execute("INSERT INTO fts (fts, rank) VALUES ('hashsize', ?)", (HASH_SIZE,))


def remove_facts(db_path: Path | str, uris: Iterable[str]) -> int:
    """Drop the rows, and the walk's stamps for them: a file taken out (a narrowed policy, a purge) must be
    read again by the next walk that may see it, not passed over as unchanged."""
    removed = 0
    with _damage_named(Path(db_path)), connect(db_path) as conn:
        stamped = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'stamps'").fetchone()
        for uri in uris:
            row = conn.execute("SELECT rowid FROM docs WHERE uri = ?", (uri,)).fetchone()
            if row:
                conn.execute("DELETE FROM fts WHERE rowid = ?", row)
                removed += conn.execute("DELETE FROM docs WHERE rowid = ?", row).rowcount
            if stamped:
                conn.execute("DELETE FROM stamps WHERE uri = ?", (uri,))
    conn.close()
    return removed


STAMPS = """
CREATE TABLE IF NOT EXISTS stamps (uri TEXT PRIMARY KEY, stamp TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def build_from_openviking(client: OpenViking, root: str | Sequence[str], db_path: Path | str,
                          workers: int = 8, visible: Callable[[str], bool] | None = None) -> IndexStats:
    """Walk `root` (one URI or several) on the server with `client`'s key, index every file, drop rows
    that vanished. Incremental: a file whose listed size and modTime match the last walk is not read
    (the listing is the whole cost of an unchanged file). `visible` (a reader's policy decision) names
    the folders and files the walk may take: what it refuses is neither listed nor kept."""
    roots = [root] if isinstance(root, str) else list(root)
    roots = [r.rstrip("/") for r in roots]
    walked = (e for r in roots for e in (client.walk(r) if visible is None else client.walk(r, into=visible)))
    # Nested roots (an area re-granted inside one the walk passes over) list a file once.
    entries = list({e.uri: e for e in walked if visible is None or visible(e.uri)}.values())
    with _damage_named(Path(db_path)), connect(db_path) as conn:
        conn.executescript(STAMPS)
        known = dict(conn.execute("SELECT uri, stamp FROM stamps").fetchall())
    conn.close()
    changed = [e for e in entries if e.stamp is None or known.get(e.uri) != e.stamp]

    def fetch(uri: str) -> tuple[str, str] | None:
        try:
            return uri, client.read(uri)
        except NotFound:
            return None  # deleted between the listing and the read

    with ThreadPoolExecutor(max_workers=workers) as pool:
        pairs = [p for p in pool.map(fetch, [e.uri for e in changed]) if p is not None]
    stats = index_facts(db_path, pairs)
    stats.unchanged += len(entries) - len(changed)
    present = {e.uri for e in entries}
    stale: list[str] = []
    with _damage_named(Path(db_path)), connect(db_path) as conn:
        for r in roots:
            stale += [u for (u,) in conn.execute("SELECT uri FROM docs WHERE uri >= ? AND uri < ?", _under(r))
                      if u not in present]
        read = {u for u, _ in pairs}
        conn.executemany("INSERT OR REPLACE INTO stamps (uri, stamp) VALUES (?, ?)",
                         [(e.uri, e.stamp) for e in changed if e.uri in read and e.stamp is not None])
        conn.executemany("DELETE FROM stamps WHERE uri = ?", [(u,) for u in stale])
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('walked_at', ?)",
                     (dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),))
    conn.close()
    stats.removed = remove_facts(db_path, stale)
    return stats


def area_stats(db_path: Path | str, target: str, counts: Callable[[str], bool] | None = None) -> tuple[int, str | None]:
    """(files, newest date) under `target` in the index; with `counts`, only the files it accepts."""
    with connect(db_path) as conn:
        if counts is None:
            count, newest = conn.execute("SELECT count(*), max(date) FROM docs WHERE uri >= ? AND uri < ?",
                                         _under(target)).fetchone()
        else:
            rows = [(u, d) for u, d in conn.execute("SELECT uri, date FROM docs WHERE uri >= ? AND uri < ?",
                                                    _under(target)) if counts(u)]
            count, newest = len(rows), max((d for _, d in rows if d), default=None)
    conn.close()
    return count, newest


def compact(db_path: Path | str) -> None:
    """Leave no trace of removed files in the file itself: FTS5 keeps a deleted file's terms in its
    segments until they merge, and SQLite keeps deleted rows in free pages until a VACUUM."""
    with _damage_named(Path(db_path)), connect(db_path) as conn:
        conn.execute("INSERT INTO fts (fts) VALUES ('optimize')")
    conn.execute("VACUUM")
    conn.close()


def uris(db_path: Path | str) -> list[str]:
    """Every file the index holds, in uri order."""
    with _damage_named(Path(db_path)), connect(db_path) as conn:
        out = [u for (u,) in conn.execute("SELECT uri FROM docs ORDER BY uri")]
    conn.close()
    return out


def walked_at(db_path: Path | str) -> dt.datetime | None:
    """When the last walk of the server finished (None: never walked, or no index)."""
    if not Path(db_path).exists():
        return None
    conn = sqlite3.connect(Path(db_path))
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'walked_at'").fetchone()
    except sqlite3.OperationalError:
        row = None
    finally:
        conn.close()
    return dt.datetime.fromisoformat(row[0]) if row else None


def _under(target: str) -> tuple[str, str]:
    """The uris under `target` as a range [lo, hi) for `uri >= ? AND uri < ?`: case-sensitive, as a
    uri is (LIKE folds ASCII case, so "notes/%" also took "Notes/..."), and the uri index serves it
    ("0" is the character after "/")."""
    prefix = target.rstrip("/")
    return prefix + "/", prefix + "0"


class KeywordIndex:
    """A read side over one index file, kept open for the life of a process (batch, MCP)."""

    name = "keyword"

    def __init__(self, db_path: Path | str, fix: str = "muninn search-index") -> None:
        self.path = Path(db_path)
        if not self.path.exists():
            raise KeywordIndexError(f"no keyword index at {self.path}", fix=f"run `{fix}` to build it")
        self._conn = connect(self.path)
        self.match = ""   # set per call by the pipeline: the FTS5 expression for this query

    def close(self) -> None:
        self._conn.close()

    def count(self) -> int:
        return self._conn.execute("SELECT count(*) FROM docs").fetchone()[0]

    def candidates(self, query: str, target: str, limit: int,
                   between: tuple[dt.datetime, dt.datetime] | None = None) -> list[Candidate]:
        """`query` is an FTS5 MATCH expression (see query.fts_query); `between` keeps only files
        dated in [from, to) (the days a query names). BM25 keeps its whole-index statistics."""
        if not query:
            return []
        if between is None:
            sql = f"SELECT uri, {BM25} AS s FROM fts WHERE fts MATCH ? AND uri >= ? AND uri < ? ORDER BY s LIMIT ?"
            args: tuple[object, ...] = (query, *_under(target), limit)
        else:
            # Each match looks up its docs row by rowid and is kept if dated in the window; julianday()
            # reads the stored ISO text whatever UTC offset it carries. (A `rowid IN (SELECT ...)`
            # filter built that list from every docs row first: 194 ms instead of 29 at 100,000 files.)
            sql = (f"SELECT d.uri, {BM25} AS s FROM fts JOIN docs d ON d.id = fts.rowid WHERE fts MATCH ? "
                   "AND d.uri >= ? AND d.uri < ? AND julianday(d.date) >= julianday(?) "
                   "AND julianday(d.date) < julianday(?) ORDER BY s LIMIT ?")
            args = (query, *_under(target), between[0].isoformat(), between[1].isoformat(), limit)
        rows = self._match(sql, args, query)
        # bm25() is "lower is better" and negative; flip it so every stage says higher is better.
        return [Candidate(uri=uri, score=-s, stage_scores={"keyword": round(-s, 4)}) for uri, s in rows]

    def scores(self, query: str, uris: list[str]) -> dict[str, float]:
        """BM25 of the given files for `query` (higher is better); files it does not match are left out.
        Linear fusion needs a keyword score for vector candidates that missed the keyword top list."""
        if not query or not uris:
            return {}
        ids = _rowids(self._conn, uris)
        marks = ", ".join("?" for _ in ids)
        sql = f"SELECT rowid, {BM25} FROM fts WHERE fts MATCH ? AND rowid IN ({marks})"
        rows = self._match(sql, (query, *ids), query)
        return {ids[rowid]: -s for rowid, s in rows}

    def _match(self, sql: str, args: tuple[object, ...], query: str) -> list[tuple]:
        """A MATCH query's rows: a bad expression is KeywordIndexError, a damaged file IndexDamaged."""
        try:
            return self._conn.execute(sql, args).fetchall()
        except sqlite3.OperationalError as exc:
            raise KeywordIndexError(f"keyword query {query!r} failed on {self.path}: {exc}") from None
        except sqlite3.DatabaseError as exc:
            if not sqlitefile.is_damage(exc):
                raise
            raise damaged(self.path, str(exc)) from None

    def header_share(self, words: list[str], targets: Sequence[str] | str | None = None) -> dict[str, float]:
        """For each word, the share of indexed files (under `targets`, if given: the files the search
        sees) whose title or breadcrumb holds it, stemmed as BM25 is. A word that heads many files
        names a facet (who said it, which project)."""
        total = self.count()
        folders = [targets] if isinstance(targets, str) else list(targets or [])
        ranges = [_under(t) for t in folders]
        where = " OR ".join("(d.uri >= ? AND d.uri < ?)" for _ in ranges)
        scoped: tuple[str, ...] = tuple(x for r in ranges for x in r)
        if ranges:
            under = self._conn.execute(f"SELECT count(*) FROM docs d WHERE {where}", scoped).fetchone()[0]
            # The usual target is the index's own root: then the whole index is the scope, and the
            # count needs no uri look-up per match (at 100,000 files: ~2 ms a facet word instead of ~21;
            # evals/results/search.md).
            scoped, total = ((), total) if under == total else (scoped, under)
        sql = (f"SELECT count(*) FROM fts JOIN docs d ON d.id = fts.rowid WHERE fts MATCH ? AND ({where})"
               if scoped else "SELECT count(*) FROM fts WHERE fts MATCH ?")
        out: dict[str, float] = {}
        for word in dict.fromkeys(w.replace('"', "") for w in words):
            if not word or not total:
                continue
            try:
                n = self._conn.execute(sql, (f'{{title breadcrumb}} : "{word}"', *scoped)).fetchone()[0]
            except sqlite3.OperationalError as exc:
                raise KeywordIndexError(f"header count for {word!r} failed on {self.path}: {exc}") from None
            except sqlite3.DatabaseError as exc:
                if not sqlitefile.is_damage(exc):
                    raise
                raise damaged(self.path, str(exc)) from None
            out[word] = n / total
        return out

    def text(self, uri: str) -> str | None:
        row = self._conn.execute("SELECT text FROM docs WHERE uri = ?", (uri,)).fetchone()
        return row[0] if row else None

    def parts(self, key: str) -> list[str]:
        """The uris of every indexed part of the section `key` (windows.section_key), in uri order."""
        rows = self._conn.execute("SELECT uri FROM docs WHERE uri >= ? AND uri < ? ORDER BY uri",
                                  windows.part_range(key)).fetchall()
        return [u for (u,) in rows if windows.is_part_of(u, key)]

    def documents(self) -> Iterator[tuple[str, str]]:
        """(uri, text) of every indexed file, in uri order."""
        yield from self._conn.execute("SELECT uri, text FROM docs ORDER BY uri")
