"""What muninn knows of each embedding model it names by id: the name OpenViking records its vectors under,
the prompts its card asks for, and the keyword weight the fusion was measured best with beside it.

The weights are chosen per model because the fusion sums z-scored BM25 and cosines, and how much a cosine is
worth depends on the model that made it: leaving one corpus out, every fold chose e5 with keyword weight 1,
bge-small's is 2, MiniLM's 2 (evals/results/corpora.md, "e5-small-v2 through the whole product";
evals/results/locomo.md). A model not in the table (a local folder) gets the weight every default had
before the table, 2. Settings a user writes always win (muninn.core.config).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Profile:
    model_name: str            # embed.model_name's default: part of OpenViking's vector identity
    keyword_weight: float      # the ranking profile's keyword_weight beside this model
    query_prompt: str = ""     # read before a question (muninn.core.embed_prompts)
    passage_prompt: str = ""   # read before a stored fact


E5 = "intfloat/e5-small-v2"
BGE = "BAAI/bge-small-en-v1.5"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"

PROFILES: dict[str, Profile] = {
    E5: Profile("e5-small-v2", 1.0, query_prompt="query: ", passage_prompt="passage: "),
    BGE: Profile("bge-small-en-v1.5", 2.0),
    MINILM: Profile("all-MiniLM-L6-v2", 2.0),
}

DEFAULT = E5          # what a new workspace embeds with
# The workspace format from which a new workspace embeds with DEFAULT (muninn.core.embed_record's upgrade step
# of that number records the model of every workspace made before).
DEFAULT_SINCE = 7
EARLIER_DEFAULT = BGE  # what a workspace made before e5 became the default embeds with, unless it said otherwise
# The name an earlier workspace's vectors carry when muninn.yaml named a local folder and no model_name:
# embed.model_name's default was bge's name, whatever the model.
EARLIER_NAME = PROFILES[BGE].model_name
OTHER_KEYWORD_WEIGHT = 2.0
# embed.second_model's `auto`: MiniLM errs on other questions than e5 and bge (evals/results/second_model.md),
# and its weights come with muninn's dependencies.
SECOND = MINILM
SECOND_WEIGHT = 1.5


def second_of(model: str) -> str:
    """embed.second_model's `auto`: the packaged MiniLM, or none beside MiniLM itself."""
    return "" if model == SECOND else SECOND


def model_name_of(model: str) -> str:
    """embed.model_name's default: the profile's name, else the local folder's own name."""
    profile = PROFILES.get(model)
    return profile.model_name if profile else Path(model).name or model


def keyword_weight_of(model: str) -> float:
    profile = PROFILES.get(model)
    return profile.keyword_weight if profile else OTHER_KEYWORD_WEIGHT
