"""The weights and levers that turn a search's evidence into order, per embedding model.

A user decides what a search returns (`search.k`, the per-file cap, the reranker, recency on or off);
how candidates are weighed is measured, so it lives here, one profile per embedder, beside the embed
profiles it follows (core/embed_profiles.py): the keyword weight depends on the model that made the
cosines. `search.ranking: {name: value}` in muninn.yaml overrides any of them for an experiment; the old
places of these keys (`search.keyword_weight`, `search.rerank.blend`, ...) still load into that override,
with a warning (core/config.py). Every figure named below is in evals/results/.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from muninn.core import embed_profiles as profiles

# The features of linear fusion (plugins/search/features.py), as a weight names them.
FusionFeature = Literal["keyword", "vector", "fact", "header", "date", "window", "second", "passage"]


class Ranking(BaseModel):
    """How plugins/search/ranking.py weighs each piece of evidence."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fusion: Literal["linear", "rrf"] = Field(
        "linear", description="linear: every candidate scored on z-scored BM25, file cosine and fact cosine "
        "(embedding sidecar, cached); rrf: reciprocal rank fusion of the two lists, no sidecar call")
    rrf_k: int = Field(60, ge=1, description="Reciprocal rank fusion constant")
    vector_weight: float = Field(1.0, ge=0, description="Weight of the vector list (rrf) or file cosine (linear)")
    fact_weight: float = Field(1.0, ge=0, description="Weight of the fact's own cosine, without its context")
    keyword_weight: float = Field(profiles.keyword_weight_of(profiles.DEFAULT), ge=0, description="BM25's weight "
                                  "in the fusion; by default the weight measured best beside embed.model "
                                  "(e5-small-v2 1, bge-small 2, MiniLM 2, a local folder 2; corpora.md)")
    header_weight: float = Field(1.0, ge=0, description="Weight of the header match: the share of the query's "
                                 "words that a file's title or breadcrumb names (who said it, which project). 0: off")
    window_weight: float = Field(0.0, ge=0, description="Weight of a candidate's best window cosine (levers.md). "
                                 "0: off")
    second_weight: float = Field(profiles.SECOND_WEIGHT, ge=0, description="Weight of the cosine under "
                                 "embed.second_model (second_model.md). 0: off, no second model is loaded")
    window_chars: int = Field(600, ge=100, description="Characters of each window the `window` feature embeds")
    header_min_share: float = Field(0.05, ge=0, le=1, description="A query word counts for the header match only "
                                    "if at least this share of indexed files carry it in their header (a facet)")
    date_weight: float = Field(1.0, ge=0, description="Weight of the date match; 0: off")
    date_slack_days: int = Field(1, ge=0, description="Days either side of a named day that still partly match")
    content_chars: int = Field(1500, ge=100, description="Characters of each candidate the cross-encoder reads")
    passage_window: int = Field(800, ge=0, description="Read a fact longer than this from its paragraph that "
                                "names most of the query's words; 0: from the top (corpora.md)")
    min_confidence: float = Field(0.01, ge=0, le=1, description="Keep fusion's order when the cross-encoder's "
                                  "best probability is below this (corpora.md); 0: always reorder")
    unsure_weights: dict[FusionFeature, Annotated[float, Field(ge=0)]] = Field(
        default_factory=dict, description="Where min_confidence keeps fusion's order, fuse again with these "
        "weights in place of the fusion's; {}: fusion's order as it was")
    blend: float = Field(0.25, ge=0, description="Final order = z(rerank logit) + blend * z(fusion score)")
    header_blend: float = Field(0.25, ge=0, description="Plus header_blend * z(header match); 0: off")
    date_blend: float = Field(0.25, ge=0, description="Plus date_blend * z(date match); 0: off")
    max_length: int = Field(256, ge=16, description="Tokens per (query, content) pair the cross-encoder reads")
    batch_size: int = Field(1, ge=1, description="Pairs per forward pass; 1: a pair's score is its own "
                            "(rerank_speed.md)")
    length_sort: bool = Field(False, description="onnx: batch pairs of similar length (scores move slightly)")
    gap: float = Field(0.0, ge=0, description="Rerank only candidates within `gap` fusion z of the best; 0: all")
    skip_margin: float = Field(0.0, ge=0, description="Skip the cross-encoder when the first fused candidate "
                               "leads the second by this many z; 0: never")
    half_life_days: float = Field(180.0, gt=0, description="Age at which the recency prior is half its weight")
    recency_weight: float = Field(0.05, ge=0, description="Added to scores normalised to 0..1: nudges near-ties")
    unit: Literal["fact", "section"] = Field(
        "fact", description="What a hit is. fact: each exported fact (a long section's parts are separate "
        "hits); section: every part of one heading is one hit, found by its best passage, which is its "
        "snippet and what the cross-encoder reads (find4.md)")
    passage_chars: int = Field(720, ge=100, description="Characters (~120 words) of each passage a section "
                               "is found by (unit: section)")
    passage_weight: float = Field(1.0, ge=0, description="Weight of a section's best passage cosine in the "
                                  "fusion (unit: section)")
    strong_match: float = Field(0.34, ge=0, le=1, description="Under this relevance for the best hit, results "
                                "say \"no strong match\" (relevance.md)")

    @property
    def embedded_window_chars(self) -> int:
        """Characters of the windows embedded for every indexed file (fact_vectors.texts): a section's
        passages, or the `window` feature's windows; 0 when neither is on."""
        if self.unit == "section":
            return self.passage_chars
        return self.window_chars if self.window_weight else 0


NAMES = frozenset(Ranking.model_fields)


def profile_of(model: str) -> dict[str, Any]:
    """What differs from the defaults beside embedding `model`."""
    return {"keyword_weight": profiles.keyword_weight_of(model)}


def resolve(model: str, overrides: dict[str, Any] | None = None) -> Ranking:
    """The ranking in use beside `model`: its profile, then `search.ranking`'s overrides, which always win.
    Settings.ranking asks on every read (a search reads it several times): the frozen result is shared."""
    return _resolve(model, json.dumps(overrides or {}, sort_keys=True, default=str))


@lru_cache(maxsize=64)
def _resolve(model: str, overrides: str) -> Ranking:
    return Ranking(**{**profile_of(model), **json.loads(overrides)})
