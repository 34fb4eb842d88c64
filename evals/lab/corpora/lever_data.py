"""What the lever lab (lever_lab.py) reads of one recorded corpus: its fact files as the keyword index holds
them, the product's keyword index itself, and e5 vectors of every text a lever needs.

Vectors come first from the run's own vector cache (what the sidecar embedded for linear fusion while the
trace was recorded, keyed as `dense.DenseScorer` keys them), then from the sidecar's model loaded in this
process (`plugins.embed.model`, one text per forward pass as the sidecar runs it), cached in an .npz so a
second pass embeds nothing. Nothing here ranks.
"""

from __future__ import annotations

import math
import re
import shutil
import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from muninn.core import embed_prompts, factfile
from muninn.core.config import EmbedSettings
from muninn.evals.lab.corpora import window_lab
from muninn.plugins.embed.model import embed, load, model_path, pooling_of
from muninn.plugins.search import dense, keyword, query
from muninn.plugins.search import doc as docmod

MAX_CHARS = dense.MAX_CHARS
_PART = re.compile(r"\s*\(part \d+/\d+\)$")     # the exporter's mark on a split section, not a heading word
WINDOW = 600     # window_lab's best size for the vector stage on PostgreSQL (evals/results/corpora.md)


class Vectors:
    """Unit vectors by (side, text): the run's cache, then this process's cache, then the model."""

    def __init__(self, cfg: EmbedSettings, model_dir: Path, run_cache: Path | None, store: Path) -> None:
        self.cfg, self.model_dir, self.store = cfg, model_dir, store
        self.prompts = embed_prompts.for_settings(cfg)
        self._scorer = dense.DenseScorer(cfg)     # only for its cache keys: nothing is posted
        self._run = sqlite3.connect(f"file:{run_cache}?mode=ro", uri=True) if run_cache and run_cache.exists() \
            else None
        self._mem: dict[str, np.ndarray] = {}
        for kept in sorted(store.parent.glob("*.npz")) if store.parent.exists() else ():
            with np.load(kept) as z:        # this file, and any a prefetch left beside it
                self._mem.update(zip(z["keys"].tolist(), z["vecs"], strict=True))
        self._encoder = None
        self.embedded = 0

    def _key(self, text: str, kind: str) -> str:
        return self._scorer._key(text[:MAX_CHARS], kind)

    def get(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        keys = [self._key(t, kind) for t in texts]
        todo = [k for k in dict.fromkeys(keys) if k not in self._mem]
        if todo and self._run is not None:
            for i in range(0, len(todo), 500):
                chunk = todo[i:i + 500]
                marks = ", ".join("?" for _ in chunk)
                rows = self._run.execute(f"SELECT key, vec FROM vectors WHERE key IN ({marks})", chunk).fetchall()
                self._mem.update((k, np.frombuffer(v, dtype=np.float32)) for k, v in rows)
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in self._mem}
        if missing:
            if self._encoder is None:
                # The folder in place of the id, with the id's own pooling (a bare folder reads embed.pooling).
                self._encoder, _ = load(self.cfg.model_copy(update={"model": str(self.model_dir),
                                                                    "pooling": pooling_of(self.cfg)}))
            side = self.prompts.before(kind) if self.prompts else ""
            # The sidecar reads a fact file as factfile.embed_text; anything else as sent.
            sent = [factfile.embed_text(t[:MAX_CHARS]) if kind == "passage" else t[:MAX_CHARS]
                    for t in missing.values()]
            vecs = embed(self._encoder, sent, side, batch_size=16)
            self._mem.update(zip(missing, vecs, strict=True))
            self.embedded += len(missing)
        return np.stack([self._mem[k] for k in keys]) if keys else np.zeros((0, 384), np.float32)

    def save(self) -> None:
        self.store.parent.mkdir(parents=True, exist_ok=True)
        keys = list(self._mem)
        np.savez(self.store, keys=np.array(keys), vecs=np.stack([self._mem[k] for k in keys]))


def tokens(text: str) -> list[str]:
    """Content words as the query's analysis reads them (no stop words, no numbers, three letters or more)."""
    return [w for w in (m.lower() for m in query._WORD.findall(text))
            if w not in query.STOP and len(w) > 2 and not w.isdigit()]


@dataclass
class Corpus:
    name: str
    index: keyword.KeywordIndex
    docs: dict[str, docmod.Doc]
    uris: list[str]
    target: str
    vectors: Vectors
    second: Vectors | None = None       # embed.second_model's, where the run fused with it
    _df: Counter[str] | None = None
    _headings: tuple[list[str], np.ndarray] | None = None
    _windows: tuple[np.ndarray, np.ndarray] | None = None

    def file_vecs(self, uris: Sequence[str]) -> np.ndarray:
        return self.vectors.get([self.docs[u].text for u in uris])

    def second_vecs(self, uris: Sequence[str]) -> np.ndarray:
        assert self.second is not None
        return self.second.get([self.docs[u].text for u in uris])

    def fact_vecs(self, uris: Sequence[str]) -> np.ndarray:
        return self.vectors.get([self.docs[u].fact or self.docs[u].body for u in uris])

    def idf(self, term: str) -> float:
        if self._df is None:
            self._df = Counter(t for u in self.uris for t in set(tokens(self.docs[u].fact or self.docs[u].body)))
        return math.log((len(self.uris) + 1) / (self._df.get(term, 0) + 0.5))

    def heading_vecs(self) -> tuple[list[str], np.ndarray]:
        """Every distinct heading of the corpus's breadcrumbs, and its vector (read as a passage)."""
        if self._headings is None:
            names = sorted({_PART.sub("", x).strip() for u in self.uris
                            for x in factfile.crumbs(self.docs[u].meta.get("breadcrumb")) if x.strip()})
            self._headings = (names, self.vectors.get(names))
        return self._headings

    def best_windows(self, qvec: np.ndarray, chars: int = WINDOW) -> np.ndarray:
        """Each fact's best cosine to `qvec` over its windows (window_lab.fact_texts), in `uris` order."""
        if self._windows is None:
            texts = [window_lab.fact_texts(self.docs[u].text, chars) for u in self.uris]
            starts = np.cumsum([0, *(len(t) for t in texts[:-1])])
            self._windows = (self.vectors.get([w for t in texts for w in t]), starts)
        mat, starts = self._windows
        return np.maximum.reduceat(mat @ qvec, starts)


def open_corpus(name: str, work: Path, scratch: Path, cfg: EmbedSettings, model_dir: Path,
                second: EmbedSettings | None = None) -> Corpus:
    """The corpus as the recorded run left it in the harness's work folder (its index copied to
    `scratch` first: the run's files are only read)."""
    src = work / name / "keyword.sqlite"
    local = scratch / name / "keyword.sqlite"
    local.parent.mkdir(parents=True, exist_ok=True)
    if not local.exists():
        shutil.copyfile(src, local)
    index = keyword.KeywordIndex(local)
    docs = {u: docmod.parse(u, t) for u, t in index.documents()}
    uris = sorted(docs)
    target = "/".join(uris[0].split("/")[:5])       # viking://resources/corpora/<run>
    vectors = Vectors(cfg, model_dir, dense.cache_path(src), scratch / name / "vectors.npz")
    other = (Vectors(second, model_path(second), dense.cache_path(src, second=True),
                     scratch / name / "second" / "vectors.npz") if second is not None else None)
    return Corpus(name, index, docs, uris, target, vectors, other)
