"""Dense rescoring: every fused candidate's cosine to the query, for the whole file and for the
fact alone, from the same embedding sidecar that OpenViking uses.

OpenViking embeds a fact file whole: front matter, header, fact and neighbouring context. That is
good for finding a file, but the context dilutes what the fact itself says, and a keyword-only
candidate has no vector score at all. So linear fusion scores every candidate on the same three
features (BM25, file cosine, fact cosine). On LoCoMo dev that lifted hit@4 over RRF, with MiniLM
vectors and with bge-small (evals/results/locomo.md).

Vectors are cached by (model, sha256 of the text) in a SQLite file next to the keyword index, so
a warm search embeds only its query.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from muninn.core import embed_prompts as promptmod
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


def cache_path(index_path: Path, second: bool = False) -> Path:
    """Where a reader's search keeps its vectors: beside its keyword index, the second model's apart (a
    purge keeps each file's own model's keys)."""
    return index_path.with_suffix(".second-vectors.sqlite" if second else ".vectors.sqlite")


def cache_paths(index_path: Path) -> tuple[Path, Path]:
    return cache_path(index_path), cache_path(index_path, second=True)


class DenseUnavailable(MuninnError):
    """The embedding sidecar did not answer: linear fusion falls back to RRF, with a warning."""

    exit_code = ExitCode.SEARCH_CONTRACT


class BilledCapReached(DenseUnavailable):
    """The embedding door refused the call at embed.max_billed_tokens (HTTP 402; muninn.core.billing): a
    search fuses without it, saying so; a fill stops there, keeping every batch it stored (exit 27)."""

    exit_code = ExitCode.BILLED_CAP


class VectorCacheBusy(DenseUnavailable):
    """The vector cache file stayed locked by another writer, or is not a database: filling stops there."""


class DenseScorer:
    name = "dense"

    def __init__(self, embed: EmbedSettings, cache: Path | str | None = None, timeout: float = 10.0,
                 strict: bool = False) -> None:
        self.url = f"{embed.base_url}/v1/embeddings"
        self.model = embed.model_name
        # strict (the second model): a reply must name the model asked for. A sidecar that does not serve
        # it answers with the first model's vectors, which would read as a second opinion that is not one.
        self.strict = strict
        self._served = False
        # The sidecar applies factfile.embed_text when fact_text is on: the same text, another vector.
        self._rule = factfile.EMBED_RULE if embed.fact_text else "whole"
        # A prompted model (e5) reads a question and a fact after different prompts: the sidecar is told
        # which side each text is on, and the side is part of its cache key.
        self.prompts = promptmod.for_settings(embed)
        # A Voyage-style provider behind the door takes the side as input_type, prompts or not.
        self._sides = bool(self.prompts) or embed.provider == "voyage"
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

    def _key(self, text: str, kind: promptmod.Kind = "passage") -> str:
        side = f"{self.prompts.before(kind)}\0" if self.prompts else f"{kind}\0" if self._sides else ""
        return hashlib.sha256(f"{self.model}\0{self._rule}\0{side}{text}".encode()).hexdigest()

    def _stored(self, keys: Sequence[str]) -> dict[str, bytes]:
        """The cached vectors of these keys, as stored (raises sqlite3.Error)."""
        out: dict[str, bytes] = {}
        if not keys:
            return out
        with self._lock:
            if (db := self._db) is None:
                return out
            for i in range(0, len(keys), 500):
                chunk = list(keys[i:i + 500])
                marks = ", ".join("?" for _ in chunk)
                out.update(db.execute(f"SELECT key, vec FROM vectors WHERE key IN ({marks})", chunk).fetchall())
        return out

    def _store(self, rows: Sequence[tuple[str, bytes]]) -> None:
        """Write vectors into the cache file (raises sqlite3.Error)."""
        with self._lock:
            if rows and (db := self._db) is not None:
                with db:
                    db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)

    def embed(self, texts: Sequence[str], kind: promptmod.Kind = "passage") -> np.ndarray:
        """Unit vectors, one row per text; cached ones are not sent again."""
        import numpy as np

        texts = [t[:MAX_CHARS] for t in texts]
        keys = [self._key(t, kind) for t in texts]
        missing = [k for k in dict.fromkeys(keys) if k not in self._mem]
        try:
            found = self._stored(missing)
        except sqlite3.Error:
            found = {}      # unreadable now: those texts are embedded again, never a failed search
        self._mem.update((k, np.frombuffer(blob, dtype=np.float32)) for k, blob in found.items())
        items = list({k: t for k, t in zip(keys, texts, strict=True) if k not in self._mem}.items())
        for i in range(0, len(items), BATCH):
            chunk = items[i:i + BATCH]
            vecs = self._post([t for _, t in chunk], kind)
            self._mem.update((k, v) for (k, _), v in zip(chunk, vecs, strict=True))
            with contextlib.suppress(sqlite3.Error):    # the file stayed busy: the vectors stay in memory
                self._store([(k, v.tobytes()) for (k, _), v in zip(chunk, vecs, strict=True)])
        return np.stack([self._mem[k] for k in keys]) if keys else np.zeros((0, 0), np.float32)

    def fill(self, texts: Sequence[str], donors: Sequence[DenseScorer] = ()) -> int:
        """Store every text's vector in the cache file ahead of any search, so no search embeds a
        candidate at first sight. A vector another reader's cache already holds (`donors`: same model,
        same rule, same text, so the same key) is copied, not embedded again. Returns how many texts
        were sent to the sidecar."""
        try:
            return self._fill(texts, donors)
        except sqlite3.Error as exc:
            raise VectorCacheBusy(f"the search vector cache {self._cache} could not be written ({exc})",
                                  fix="run it again once the other writer is done; the file is only a cache, so "
                                      "a damaged one can be deleted") from None

    def _fill(self, texts: Sequence[str], donors: Sequence[DenseScorer]) -> int:
        with self._lock:
            opened = self._db is not None
        if not opened:
            if self.cache_problem:
                raise sqlite3.DatabaseError(self.cache_problem)
            return 0
        cut = {self._key(t[:MAX_CHARS]): t[:MAX_CHARS] for t in texts}
        stored = self._stored(list(cut))
        todo = [k for k in cut if k not in stored]
        for donor in donors:
            try:
                given = donor._stored(todo) if todo else {}
            except sqlite3.Error:
                continue    # a damaged neighbour gives nothing; this reader's own fill goes on
            self._store(list(given.items()))
            todo = [k for k in todo if k not in given]
        for i in range(0, len(todo), BATCH):
            chunk = todo[i:i + BATCH]
            vecs = self._post([cut[k] for k in chunk])
            self._store([(k, v.tobytes()) for k, v in zip(chunk, vecs, strict=True)])
        return len(todo)

    def keep_only(self, texts: Sequence[str]) -> int:
        """Drop every cached vector that is not of one of `texts` (as fill() keys them): the purge of a
        reader's cache once its index lost files. Query vectors go too; they are only a cache.
        Returns how many were dropped."""
        keep = {self._key(t[:MAX_CHARS]) for t in texts}
        with self._lock:
            if (db := self._db) is None:
                return 0
            stale = [(k,) for (k,) in db.execute("SELECT key FROM vectors") if k not in keep]
            with db:
                db.executemany("DELETE FROM vectors WHERE key = ?", stale)
            if stale:   # the dropped vectors' pages, out of the file and its write-ahead log
                db.execute("VACUUM")
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._mem = {k: v for k, v in self._mem.items() if k in keep}
        return len(stale)

    def _post(self, texts: list[str], kind: promptmod.Kind = "passage") -> list[np.ndarray]:
        import httpx
        import numpy as np

        if self.strict and not self._served:
            self._check_served()
        body: dict = {"input": texts, "model": self.model}
        if self._sides:
            body["input_type"] = kind
        try:
            resp = self._http.post(self.url, json=body)
        except httpx.HTTPError as exc:
            raise DenseUnavailable(f"embedding sidecar at {self.url} is not reachable: {type(exc).__name__}",
                                   fix="`muninn up` starts it; `muninn status` says whether it runs") from None
        if resp.status_code == 402:
            try:
                said = str(resp.json().get("detail"))
            except (ValueError, AttributeError):
                said = resp.text[:300]
            raise BilledCapReached(said)
        if resp.status_code >= 400:
            raise DenseUnavailable(f"embedding sidecar at {self.url} answered HTTP {resp.status_code}: "
                                   f"{resp.text[:200]}")
        try:
            reply = resp.json()
            rows = sorted(reply["data"], key=lambda r: r["index"])
            vecs = [np.asarray(row["embedding"], dtype=np.float32) for row in rows]
            if any(v.ndim != 1 or not np.isfinite(v).all() for v in vecs) or len({v.shape for v in vecs}) > 1:
                raise ValueError("embeddings that are not finite vectors of one length")
        except (ValueError, KeyError, TypeError) as exc:
            # A proxy page, a truncated body or another API: never vectors made up from it.
            raise DenseUnavailable(f"embedding sidecar at {self.url} answered a malformed reply "
                                   f"({type(exc).__name__}: {' '.join(str(exc).split())[:120]})",
                                   fix="check embed.host / embed.port in muninn.yaml and the sidecar's log "
                                       "(`muninn status`)") from None
        if self.strict and reply.get("model") != self.model:
            raise DenseUnavailable(f"embedding sidecar at {self.url} answered with model {reply.get('model')!r}, "
                                   f"not {self.model!r}", fix=self._restart)
        out = []
        for vec in vecs:
            norm = float(np.linalg.norm(vec))
            out.append(vec / norm if norm > 0 else vec)
        if len(out) != len(texts):
            raise DenseUnavailable(f"embedding sidecar at {self.url} returned {len(out)} vectors "
                                   f"for {len(texts)} texts")
        return out

    _restart = ("`muninn down && muninn up` restarts the sidecar with embed.second_model; set it to none to turn "
                "the second model off")

    def _check_served(self) -> None:
        """A sidecar answers a model it does not serve with its own, under the name asked for: so the list
        of what it serves is read once, before any vector is taken as the second model's."""
        import httpx

        url = self.url.removesuffix("/embeddings") + "/models"
        try:
            listed = {m.get("id") for m in self._http.get(url).json().get("data", [])}
        except (httpx.HTTPError, ValueError, AttributeError, TypeError) as exc:
            raise DenseUnavailable(f"embedding sidecar at {url} did not list its models: {type(exc).__name__}",
                                   fix=self._restart) from None
        if self.model not in listed:
            raise DenseUnavailable(f"embedding sidecar at {self.url} does not serve {self.model!r} (it serves "
                                   f"{', '.join(sorted(str(m) for m in listed)) or 'nothing it names'})",
                                   fix=self._restart)
        self._served = True

    def query_vector(self, query: str) -> np.ndarray:
        """The question's vector as cosines() reads it (a model without prompts reads both sides alike)."""
        return self.embed([query], "query" if self.prompts else "passage")[0]

    def cosines(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        return [float(x) for x in self.embed(texts, "passage") @ self.query_vector(query)]
