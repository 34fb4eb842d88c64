"""The FTS5 schemas of the tools seed 001 federates, read from their public code:

    cortex  tools-for-agents/cortex src/db.js @ 2500103d0c860292179c805ca2c6c15168e736ce
            notes(slug PK, title, type, updated, body, ...) + notes_fts(slug UNINDEXED, title, tags, body)
    scout   tools-for-agents/scout src/db.js @ 7a1851e4b46fffa65ba15336019e229f19d0fc47
            pages(url PK, title, markdown, fetched_at, ...) + pages_fts(url UNINDEXED, title, markdown)
    lens    tools-for-agents/lens src/db.js @ 0fe3e605170e0aa7440d335afbcc13ad79d9661a
            files(path PK, lang, indexed_at, ...) + chunks(path, body, lang, start, "end" UNINDEXED)

and how recall (tools-for-agents/recall src/core.js @ 12eb35455f52933d78f42acc25b2f9882415a3b4) joins
them for title and reference. Each query returns the whole text as `excerpt`: muninn redacts the whole
text and cuts its own excerpt from what is left, so a cut never leaves the start of a secret behind.
Two `?`: the MATCH expression, then the limit. `score` is bm25 (lower is better).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    query: str      # ? MATCH, ? limit -> title, ref, meta, excerpt, score, date
    read: str       # ? ref -> the whole text, first column
    count: str      # -> entries
    env: str        # the variable seed 001 names for it (`muninn init`/`doctor` suggest, never read at query time)
    default: str    # where the tool keeps it below that variable's folder, or ""


PRESETS: dict[str, Preset] = {
    "cortex": Preset(
        query="SELECT n.title AS title, n.slug AS ref, n.type AS meta, n.body AS excerpt, "
              "bm25(notes_fts) AS score, n.updated AS date "
              "FROM notes_fts JOIN notes n ON n.slug = notes_fts.slug "
              "WHERE notes_fts MATCH ? ORDER BY score LIMIT ?",
        read="SELECT body FROM notes WHERE slug = ? LIMIT 1",
        count="SELECT COUNT(*) FROM notes",
        env="CORTEX_VAULT", default=".cortex/index.db"),
    "scout": Preset(
        query="SELECT p.title AS title, p.url AS ref, 'web' AS meta, p.markdown AS excerpt, "
              "bm25(pages_fts) AS score, p.fetched_at AS date "
              "FROM pages_fts JOIN pages p ON p.url = pages_fts.url "
              "WHERE pages_fts MATCH ? ORDER BY score LIMIT ?",
        read="SELECT markdown FROM pages WHERE url = ? LIMIT 1",
        count="SELECT COUNT(*) FROM pages",
        env="SCOUT_DB", default=""),
    "lens": Preset(
        query="SELECT chunks.path AS title, chunks.path || ':' || CAST(chunks.start AS INTEGER) AS ref, "
              "chunks.lang AS meta, chunks.body AS excerpt, bm25(chunks) AS score, f.indexed_at AS date "
              "FROM chunks LEFT JOIN files f ON f.path = chunks.path "
              "WHERE chunks MATCH ? ORDER BY score LIMIT ?",
        read="SELECT body FROM chunks WHERE path || ':' || CAST(start AS INTEGER) = ? LIMIT 1",
        count="SELECT COUNT(*) FROM files",
        env="LENS_DB", default=""),
}

# agent-hq's team memory (tools-for-agents/agent-hq src/server.js, src/services.js Memory.search @
# 665690f7f0d96b256dc4d0cf630dda87c03c4b34): GET /api/memory?q=&limit= answers a JSON list of
# {id, agent_id, namespace, title, content, tags, importance, created_at, updated_at}; `q` is one LIKE.
HTTP_ENV = "HQ_URL"
