"""Plain retrievers over the same sections muninn exports, with no muninn wrapping: no front matter, no
lead line, no fusion, no rerank. They are the floor the product must clear.

- dense, one per installable embedding model (`MODELS`; the harness's `--baselines`): "breadcrumb + body"
  embedded in this process by the sidecar's own loader (plugins.embed.model: same 256-token window, the
  prompts the model's card asks for), ranked by cosine. Not only the product's own model: the gate must
  compare the defaults against the best embedder a user could install, not the one they happen to run;
- BM25: rank-bm25's Okapi BM25 over the same text, lower-cased word tokens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from rank_bm25 import BM25Okapi

from muninn.core import embed_prompts as prompts_mod
from muninn.core import hub_models as hub
from muninn.core.config import EmbedSettings
from muninn.plugins.embed.model import embed, load, model_path

_WORD = re.compile(r"\w+", re.UNICODE)
BATCH = 32

# Short name -> `embed.model` id: what `muninn models fetch` calls them (core.hub_models). e5 and bge resolve
# to their int8 ONNX copies (models fetch, packaged), MiniLM to its packaged fp32 copy, mpnet to a hub fetch.
MODELS: dict[str, str] = {name: m.repo for name, m in hub.CATALOG.items() if m.kind == "embedder"}
# Every run. mpnet is left out by default for its cost (~4x bge's compute a text, in fp32) and because only
# `muninn models fetch mpnet` installs it; `--baselines ... mpnet` adds it where it is fetched.
DEFAULT_MODELS = ("bge-small", "e5-small-v2", "MiniLM-L6")
BM25_NAME = "BM25 baseline"


def tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class Bm25:
    name = BM25_NAME

    def __init__(self, texts: Sequence[str]) -> None:
        self.model = BM25Okapi([tokens(t) for t in texts])

    def rank(self, query: str, k: int) -> list[int]:
        scores = self.model.get_scores(tokens(query))
        return [int(i) for i in np.argsort(-scores, kind="stable")[:k]]


def dense_name(model: str) -> str:
    return f"dense {model}"


def is_baseline(variant: str) -> bool:
    """A plain retriever's row (older runs named the one dense row "dense baseline")."""
    return variant == BM25_NAME or variant.startswith("dense ")


def settings_for(model: str, base: EmbedSettings) -> EmbedSettings:
    """The product's embed settings (window, threads) with `model` in place, and that model's own prompts.
    `model` is a short name of MODELS, or anything `embed.model` takes (an id, a local folder)."""
    return base.as_model(MODELS.get(model, model))


def check(models: Sequence[str], base: EmbedSettings) -> None:
    """Fail before a run, not after its syncs, when a baseline's model cannot be had (the error's fix says
    how to get it: `muninn models fetch`, `muninn models fetch NAME`)."""
    for model in models:
        model_path(settings_for(model, base))


class Dense:
    """One model's cosine ranking over every section, the sections embedded once."""

    def __init__(self, model: str, texts: Sequence[str], encoder: Any, prompts: prompts_mod.Prompts) -> None:
        self.name = dense_name(model)
        self.encoder = encoder
        self.prompts = prompts
        self.matrix = embed(encoder, list(texts), prompts.passage, batch_size=BATCH)

    @classmethod
    def load(cls, model: str, embed_settings: EmbedSettings, texts: Sequence[str]) -> Dense:
        cfg = settings_for(model, embed_settings)
        encoder, _ = load(cfg)
        return cls(model, texts, encoder, prompts_mod.for_settings(cfg))

    def rank(self, query: str, k: int) -> list[int]:
        q = embed(self.encoder, [query], self.prompts.query)[0]
        return [int(i) for i in np.argsort(-(self.matrix @ q), kind="stable")[:k]]
