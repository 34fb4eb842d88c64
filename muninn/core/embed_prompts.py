"""What an embedding model reads before a question and before a stored text, and which of the two a text is.

Some models were trained with a prompt on each side and rank worse without it: e5 reads "query: " before a
question and "passage: " before a document. bge-small (for its passages), MiniLM and mpnet read none, and
for them nothing here changes a vector.

A request says which side a text is on with `input_type` ("query", or "passage"/"document"), as OpenViking's
OpenAI embedder sends it when `query_param`/`document_param` are set (stack.ov_conf sets them for a prompted
model) and as muninn's own clients send it. A request without it is read the safe way: a fact file is a
passage, anything else is a question.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from muninn.core import embed_profiles as profiles
from muninn.core import factfile
from muninn.core.config import EmbedSettings

Kind = Literal["query", "passage"]
INPUT_TYPES: dict[str, Kind] = {"query": "query", "passage": "passage", "document": "passage"}


@dataclass(frozen=True)
class Prompts:
    """What a model's card says to put before a query and before a passage."""

    query: str = ""
    passage: str = ""

    def __bool__(self) -> bool:
        return bool(self.query or self.passage)

    def before(self, kind: Kind) -> str:
        return self.query if kind == "query" else self.passage


# The models whose cards ask for prompts, by the id `embed.model` names them with (their profiles say which).
KNOWN: dict[str, Prompts] = {model: Prompts(p.query_prompt, p.passage_prompt)
                             for model, p in profiles.PROFILES.items() if p.query_prompt or p.passage_prompt}


def for_settings(embed: EmbedSettings) -> Prompts:
    """The configured model's prompts: `embed.query_prompt` / `embed.passage_prompt` when set, else the
    model's own (KNOWN), else none."""
    own = KNOWN.get(embed.model, Prompts())
    return Prompts(query=own.query if embed.query_prompt is None else embed.query_prompt,
                   passage=own.passage if embed.passage_prompt is None else embed.passage_prompt)


def kind_of(text: str, input_type: str | None) -> Kind:
    """Which side a request's text is on: as the request says, else a fact file is a passage."""
    if input_type is not None:
        return INPUT_TYPES[input_type]
    return "passage" if factfile.is_fact_text(text) else "query"
