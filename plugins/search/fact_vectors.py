"""Every reader's search vectors, computed before its searches need them.

Linear fusion scores each candidate on its cosine to the query, for the whole file and for the fact
alone (stages/linear.py). A candidate seen for the first time costs two embeddings, so on a corpus
that searches have not yet crossed, a question without rerank spent most of its time embedding.
That was 667 ms p50 against 7 ms once the candidates were cached (evals/results/benchmarks.md).
The nightly refresh fills each reader's vector cache from its keyword index, and only new texts
are embedded.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from muninn.core.config import Settings
from muninn.plugins.search import dense, keyword
from muninn.plugins.search import doc as docmod

if TYPE_CHECKING:
    import numpy as np


@dataclass
class Filled:
    indexes: int = 0
    texts: int = 0
    embedded: int = 0
    by_index: dict[str, int] = field(default_factory=dict)    # index path: texts embedded for it


def texts(index: keyword.KeywordIndex) -> list[str]:
    """The two texts linear fusion embeds for each indexed file, read as the content stage reads them."""
    out: list[str] = []
    for uri, text in index.documents():
        d = docmod.parse(uri, text)
        out += [d.text, d.fact or d.body]
    return out


def fill(settings: Settings, index_paths: Iterable[Path]) -> Filled:
    """Fill the vector cache of every index that exists; a text shared by several readers is embedded once.
    Raises dense.DenseUnavailable when the embedding sidecar does not answer."""
    done = Filled()
    if settings.search.fusion != "linear":
        return done
    known: dict[str, np.ndarray] = {}
    for path in dict.fromkeys(index_paths):
        if not path.exists():
            continue
        index = keyword.KeywordIndex(path)
        scorer = dense.DenseScorer(settings.embed, dense.cache_path(path), timeout=max(settings.search.timeout, 60.0))
        try:
            batch = texts(index)
            done.by_index[str(path)] = scorer.fill(batch, known)
            done.embedded += done.by_index[str(path)]
        finally:
            scorer.close()
            index.close()
        done.indexes += 1
        done.texts += len(batch)
    return done
