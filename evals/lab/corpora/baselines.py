"""Two plain retrievers over the same sections muninn exports, with no muninn wrapping: no front
matter, no context line, no fusion, no rerank. They are the floor the product must clear.

- dense: "breadcrumb + body" embedded by the same sidecar muninn's stack serves (same model, same
  256-token window), ranked by cosine;
- BM25: rank-bm25's Okapi BM25 over the same text, lower-cased word tokens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import httpx
import numpy as np
from rank_bm25 import BM25Okapi

from muninn.core import embed_prompts as prompts
from muninn.core.config import EmbedSettings

_WORD = re.compile(r"\w+", re.UNICODE)
BATCH = 32


def tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class Bm25:
    name = "BM25 baseline"

    def __init__(self, texts: Sequence[str]) -> None:
        self.model = BM25Okapi([tokens(t) for t in texts])

    def rank(self, query: str, k: int) -> list[int]:
        scores = self.model.get_scores(tokens(query))
        return [int(i) for i in np.argsort(-scores, kind="stable")[:k]]


class Dense:
    name = "dense baseline"

    def __init__(self, embed: EmbedSettings, texts: Sequence[str], timeout: float = 120.0) -> None:
        self.url = f"{embed.base_url}/v1/embeddings"
        self.model_name = embed.model_name
        self.prompted = bool(prompts.for_settings(embed))
        self.http = httpx.Client(timeout=timeout)
        self.matrix = self._normed(np.vstack([self.embed(list(texts[i:i + BATCH]))
                                              for i in range(0, len(texts), BATCH)]))

    def embed(self, batch: list[str], kind: prompts.Kind = "passage") -> np.ndarray:
        body = {"model": self.model_name, "input": batch, **({"input_type": kind} if self.prompted else {})}
        resp = self.http.post(self.url, json=body)
        resp.raise_for_status()
        data = sorted(resp.json()["data"], key=lambda d: d["index"])
        return np.asarray([d["embedding"] for d in data], dtype=np.float32)

    @staticmethod
    def _normed(m: np.ndarray) -> np.ndarray:
        return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)

    def rank(self, query: str, k: int) -> list[int]:
        q = self._normed(self.embed([query], "query"))[0]
        return [int(i) for i in np.argsort(-(self.matrix @ q), kind="stable")[:k]]

    def close(self) -> None:
        self.http.close()
