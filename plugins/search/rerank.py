"""The content reranker: a cross-encoder scores (query, start of the file) pairs.

`search.rerank.model` is one of
- a local folder with weights (loaded by sentence-transformers' CrossEncoder, or FlagEmbedding's
  FlagReranker with `backend: flag`; both give the same scores),
- a Hugging Face hub id, resolved from the local cache only: a search never downloads,
- `endpoint:http://host:port`, a text-embeddings-inference style `POST /rerank` (a GPU box).

Missing weights or an unreachable endpoint raise RerankUnavailable; the pipeline then returns
fusion order and says so in the result's warnings (and `muninn doctor` says it too).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import httpx

from muninn.core.config import RerankSettings
from muninn.core.errors import MuninnError
from muninn.plugins.search.stages import StageError

ENDPOINT = "endpoint:"
_FIX = ("put the weights on disk (a folder with config.json) and set search.rerank.model to it, or copy a "
        "Hugging Face cache that holds them, or point search.rerank.model at `endpoint:http://host:port`; "
        "--no-rerank silences this")


class RerankUnavailable(MuninnError):
    """No usable reranker: weights absent or endpoint down. Searches carry on by fusion, with a warning."""

    exit_code = 10


def resolve(model: str) -> str:
    """A local folder for `model`, or the endpoint URL. Never touches the network."""
    if model.startswith(ENDPOINT):
        return model
    path = Path(model).expanduser()
    if path.exists():
        if not (path / "config.json").exists():
            raise RerankUnavailable(f"reranker folder {path} has no config.json (no model weights)", fix=_FIX)
        return str(path)
    if model.startswith(("/", ".", "~")) or model.count("/") != 1:
        raise RerankUnavailable(f"reranker weights not found at {model}", fix=_FIX)
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return snapshot_download(model, local_files_only=True)
    except (LocalEntryNotFoundError, OSError, ValueError):
        raise RerankUnavailable(f"reranker weights for {model} are not in the local Hugging Face cache",
                                fix=_FIX) from None


class FlagBackend:
    name = "flag"

    def __init__(self, path: str, max_length: int, batch_size: int, int8: bool = False) -> None:
        from FlagEmbedding import FlagReranker

        # One device, so FlagEmbedding never starts its multi-process pool on CPU. normalize: sigmoid
        # scores in 0..1, the same scale as CrossEncoder's and TEI's, so recency weights mean one thing.
        self.model = FlagReranker(path, use_fp16=False, devices="cpu", max_length=max_length,
                                  batch_size=batch_size, normalize=True)
        if int8:
            _quantise(self.model.model)

    def rerank(self, query: str, docs: Sequence[str]) -> list[float]:
        scores = self.model.compute_score([[query, d] for d in docs])
        return [float(scores)] if isinstance(scores, int | float) else [float(s) for s in scores]


class CrossEncoderBackend:
    name = "cross-encoder"

    def __init__(self, path: str, max_length: int, batch_size: int, int8: bool = False) -> None:
        from sentence_transformers import CrossEncoder

        self.batch_size = batch_size
        self.model = CrossEncoder(path, device="cpu", max_length=max_length, local_files_only=True)
        if int8:
            _quantise(self.model)

    def rerank(self, query: str, docs: Sequence[str]) -> list[float]:
        scores = self.model.predict([(query, d) for d in docs], batch_size=self.batch_size,
                                    show_progress_bar=False, convert_to_numpy=True)
        return [float(s) for s in scores]


def _quantise(module) -> None:
    """int8 weights for every Linear layer, activations quantised on the fly: CPU only."""
    import torch

    torch.ao.quantization.quantize_dynamic(module, {torch.nn.Linear}, dtype=torch.qint8, inplace=True)


class EndpointBackend:
    """TEI's /rerank: {"query", "texts"} -> [{"index", "score"}], in any order."""

    name = "endpoint"

    def __init__(self, url: str, timeout: float) -> None:
        self.url = url.rstrip("/")
        self._http = httpx.Client(timeout=timeout)

    def rerank(self, query: str, docs: Sequence[str]) -> list[float]:
        try:
            resp = self._http.post(f"{self.url}/rerank", json={"query": query, "texts": list(docs),
                                                                "truncate": True, "raw_scores": False})
        except httpx.HTTPError as exc:
            raise RerankUnavailable(f"rerank endpoint {self.url} is not reachable: {type(exc).__name__}",
                                    fix="start the rerank server or fix search.rerank.model") from None
        if resp.status_code >= 400:
            raise RerankUnavailable(f"rerank endpoint {self.url} answered HTTP {resp.status_code}: "
                                    f"{resp.text[:200]}", fix="check the server's log")
        body = resp.json()
        items = body if isinstance(body, list) else body.get("results", [])
        scores = [math.nan] * len(docs)
        try:
            for item in items:
                scores[int(item["index"])] = float(item.get("score", item.get("relevance_score")))
        except (KeyError, IndexError, TypeError, ValueError):
            raise StageError(f"rerank endpoint {self.url} returned an unexpected shape: {str(body)[:120]}") from None
        return scores


class CachedReranker:
    """Scores keyed by (query, document text): a repeated batch or MCP call costs nothing."""

    def __init__(self, inner: FlagBackend | CrossEncoderBackend | EndpointBackend, size: int = 20_000) -> None:
        self.inner = inner
        self.name = f"rerank:{inner.name}"
        self._cache: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._size = size

    def rerank(self, query: str, docs: Sequence[str]) -> list[float]:
        todo = [d for d in dict.fromkeys(docs) if (query, d) not in self._cache]
        if todo:
            for d, s in zip(todo, self.inner.rerank(query, todo), strict=False):
                self._cache[(query, d)] = s
            while len(self._cache) > self._size:
                self._cache.popitem(last=False)
        return [self._cache.get((query, d), math.nan) for d in docs]


_LOADED: dict[tuple, CachedReranker] = {}


def load(cfg: RerankSettings) -> CachedReranker:
    """The reranker for these settings, loaded once per process."""
    key = (cfg.model, cfg.backend, cfg.max_length, cfg.batch_size, cfg.threads, cfg.int8)
    if key in _LOADED:
        return _LOADED[key]
    where = resolve(cfg.model)
    if where.startswith(ENDPOINT):
        inner: FlagBackend | CrossEncoderBackend | EndpointBackend = EndpointBackend(
            where[len(ENDPOINT):], cfg.timeout)
    else:
        if cfg.threads:
            import torch

            torch.set_num_threads(cfg.threads)
        backend = cfg.backend
        if backend == "auto":
            import importlib.util

            # Same weights, same scores (the tests check both against a plain forward pass), but
            # CrossEncoder was 1.5x faster on CPU here: FlagReranker tokenises pair by pair in Python
            # and scores its first batch twice to probe memory (evals/results/search.md).
            backend = "cross-encoder" if importlib.util.find_spec("sentence_transformers") else "flag"
        cls = FlagBackend if backend == "flag" else CrossEncoderBackend
        inner = cls(where, cfg.max_length, cfg.batch_size, cfg.int8)
    _LOADED[key] = CachedReranker(inner)
    return _LOADED[key]
