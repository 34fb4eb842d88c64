"""Dense rescoring: every fused candidate's cosine to the query, for the whole file and for the
fact alone, from the same embedding sidecar that OpenViking uses.

OpenViking embeds a fact file whole: front matter, header, fact and neighbouring context. That is
good for finding a file, but the context dilutes what the fact itself says, and a keyword-only
candidate has no vector score at all. So linear fusion scores every candidate on the same three
features (BM25, file cosine, fact cosine). On LoCoMo dev that took hit@4 from 0.670 to 0.726 over
RRF with MiniLM vectors, and from 0.725 to 0.755 with bge-small (evals/results/locomo.md).

Vectors are cached by (model, sha256 of the text) in a SQLite file next to the keyword index, so
a warm search embeds only its query.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from muninn.core import factfile
from muninn.core.config import EmbedSettings
from muninn.core.errors import ExitCode, MuninnError

if TYPE_CHECKING:   # imported where used: `muninn search` through `muninn serve` never loads them
    import numpy as np

# The sidecar's model reads 256 tokens; nothing past ~2,000 characters can change a vector.
MAX_CHARS = 2000
BATCH = 64
# Seconds a write waits for another process's (the nightly fill beside a running MCP server).
BUSY_SECONDS = 10.0


def cache_path(index_path: Path) -> Path:
    """Where a reader's search keeps its vectors: beside its keyword index."""
    return index_path.with_suffix(".vectors.sqlite")


class DenseUnavailable(MuninnError):
    """The embedding sidecar did not answer: linear fusion falls back to RRF, with a warning."""

    exit_code = ExitCode.SEARCH_CONTRACT


class VectorCacheBusy(DenseUnavailable):
    """The vector cache file stayed locked by another writer, or is not a database: filling stops there."""


class DenseScorer:
    name = "dense"

    def __init__(self, embed: EmbedSettings, cache: Path | str | None = None, timeout: float = 10.0) -> None:
        self.url = f"{embed.base_url}/v1/embeddings"
        self.model = embed.model_name
        # The sidecar applies factfile.embed_text when fact_text is on: the same text, another vector.
        self._rule = factfile.EMBED_RULE if embed.fact_text else "whole"
        import httpx

        self._http = httpx.Client(timeout=timeout)
        self._mem: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self._cache = Path(cache) if cache is not None else None
        self._conn: sqlite3.Connection | None = None
        self.cache_problem = ""

    @property
    def _db(self) -> sqlite3.Connection | None:
        """Opened on first use: a search that never fuses linearly (identifier, rrf) never creates it."""
        if self._conn is None and self._cache is not None and not self.cache_problem:
            self._cache.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self._cache, check_same_thread=False, timeout=BUSY_SECONDS)
            try:
                conn.execute("PRAGMA journal_mode=WAL")     # a search reads while the nightly writes
                conn.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vec BLOB NOT NULL)")
            except sqlite3.Error as exc:
                # Only a cache: a search goes on embedding in memory; fill() reports the problem.
                conn.close()
                self.cache_problem = str(exc)
                return None
            self._conn = conn
        return self._conn

    def close(self) -> None:
        self._http.close()
        if self._conn is not None:
            self._conn.close()

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.model}\0{self._rule}\0{text}".encode()).hexdigest()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors, one row per text; cached ones are not sent again."""
        import numpy as np

        texts = [t[:MAX_CHARS] for t in texts]
        keys = [self._key(t) for t in texts]
        with self._lock:
            missing = [k for k in dict.fromkeys(keys) if k not in self._mem]
            if missing and self._db is not None:
                marks = ", ".join("?" for _ in missing)
                try:
                    for key, blob in self._db.execute(f"SELECT key, vec FROM vectors WHERE key IN ({marks})",
                                                      missing):
                        self._mem[key] = np.frombuffer(blob, dtype=np.float32)
                except sqlite3.Error:
                    pass    # unreadable now: those texts are embedded again, never a failed search
            todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in self._mem}
        if todo:
            items = list(todo.items())
            for i in range(0, len(items), BATCH):
                chunk = items[i:i + BATCH]
                vecs = self._post([t for _, t in chunk])
                with self._lock:
                    for (key, _), vec in zip(chunk, vecs, strict=True):
                        self._mem[key] = vec
                    if self._db is not None:
                        try:
                            with self._db:
                                self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                                                     [(k, self._mem[k].tobytes()) for k, _ in chunk])
                        except sqlite3.OperationalError:
                            pass    # the file stayed busy: this search keeps its vectors in memory
        return np.stack([self._mem[k] for k in keys]) if keys else np.zeros((0, 0), np.float32)

    def fill(self, texts: Sequence[str], known: dict[str, np.ndarray] | None = None) -> int:
        """Store every text's vector in the cache file ahead of any search, so no search embeds a
        candidate at first sight. A vector in `known` (a pass over another reader's index: same model,
        same rule, same text) is copied, not embedded again; those embedded here are added to it.
        Returns how many texts were sent to the sidecar."""
        known = {} if known is None else known
        try:
            return self._fill(texts, known)
        except sqlite3.Error as exc:
            raise VectorCacheBusy(f"the search vector cache {self._cache} could not be written ({exc})",
                                  fix="run it again once the other writer is done; the file is only a cache, so "
                                      "a damaged one can be deleted") from None

    def _fill(self, texts: Sequence[str], known: dict[str, np.ndarray]) -> int:
        db = self._db
        if db is None:
            if self.cache_problem:
                raise sqlite3.DatabaseError(self.cache_problem)
            return 0
        cut = {self._key(t[:MAX_CHARS]): t[:MAX_CHARS] for t in texts}
        keys = list(cut)
        stored: set[str] = set()
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            marks = ", ".join("?" for _ in chunk)
            stored |= {k for (k,) in db.execute(f"SELECT key FROM vectors WHERE key IN ({marks})", chunk)}
        copied = [(k, known[k].tobytes()) for k in keys if k not in stored and k in known]
        todo = [k for k in keys if k not in stored and k not in known]
        with self._lock, db:
            db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", copied)
        for i in range(0, len(todo), BATCH):
            chunk = todo[i:i + BATCH]
            vecs = self._post([cut[k] for k in chunk])
            known.update(zip(chunk, vecs, strict=True))
            with self._lock, db:
                db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                               [(k, v.tobytes()) for k, v in zip(chunk, vecs, strict=True)])
        return len(todo)

    def _post(self, texts: list[str]) -> list[np.ndarray]:
        import httpx
        import numpy as np

        try:
            resp = self._http.post(self.url, json={"input": texts, "model": self.model})
        except httpx.HTTPError as exc:
            raise DenseUnavailable(f"embedding sidecar at {self.url} is not reachable: {type(exc).__name__}",
                                   fix="`muninn up` starts it; `muninn status` says whether it runs") from None
        if resp.status_code >= 400:
            raise DenseUnavailable(f"embedding sidecar at {self.url} answered HTTP {resp.status_code}: "
                                   f"{resp.text[:200]}")
        try:
            rows = sorted(resp.json()["data"], key=lambda r: r["index"])
            vecs = [np.asarray(row["embedding"], dtype=np.float32) for row in rows]
            if any(v.ndim != 1 or not np.isfinite(v).all() for v in vecs) or len({v.shape for v in vecs}) > 1:
                raise ValueError("embeddings that are not finite vectors of one length")
        except (ValueError, KeyError, TypeError) as exc:
            # A proxy page, a truncated body or another API: never vectors made up from it.
            raise DenseUnavailable(f"embedding sidecar at {self.url} answered a malformed reply "
                                   f"({type(exc).__name__}: {' '.join(str(exc).split())[:120]})",
                                   fix="check embed.host / embed.port in muninn.yaml and the sidecar's log "
                                       "(`muninn status`)") from None
        out = []
        for vec in vecs:
            norm = float(np.linalg.norm(vec))
            out.append(vec / norm if norm > 0 else vec)
        if len(out) != len(texts):
            raise DenseUnavailable(f"embedding sidecar at {self.url} returned {len(out)} vectors "
                                   f"for {len(texts)} texts")
        return out

    def cosines(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        vecs = self.embed([query, *texts])
        return [float(x) for x in vecs[1:] @ vecs[0]]
