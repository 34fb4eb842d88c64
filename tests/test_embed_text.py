"""What the embedder reads of a fact file (factfile.embed_text), and that the sidecar applies it.

A documentation fact's front matter took two thirds of a 256-token window (evals/results/corpora.md),
so a vector read ids and hashes instead of the answer. The rule: breadcrumb, fact, context; anything
that is not a fact file passes unchanged, so questions and stored files meet on the same text.
"""

from __future__ import annotations

import pytest
from conftest import RecordingEncoder
from fastapi.testclient import TestClient

from muninn.core import factfile
from muninn.core.config import EmbedSettings
from muninn.plugins.embed.server import create_app
from muninn.plugins.search.dense import DenseScorer

BODY = "Set `wal_level = replica` and restart.\n\nThe standby then streams from the primary."


def _fact(**kw: object) -> str:
    fields = {"id": "notes/pg.md#wal", "source": "notes", "kind": "note", "title": "WAL",
              "body": BODY, "lead": "Note section “WAL” from pg.md, dated 2025-01-02, from its front matter.",
              "breadcrumb": ("PostgreSQL", "Replication", "WAL"), "tags": ("pg", "replication"),
              "date": "2025-01-02", "source_path": "pg.md"}
    fields.update(kw)
    return factfile.render(factfile.FactFile(**fields)).text  # type: ignore[arg-type]


def test_a_fact_is_embedded_as_breadcrumb_then_fact() -> None:
    text = factfile.embed_text(_fact())
    assert text == "PostgreSQL › Replication › WAL\n\n" + BODY


@pytest.mark.parametrize("needle", ["content_hash", "source_path", "notes/pg.md#wal", "---", "from its front matter",
                                    "replication]", "2025-01-02"])
def test_no_wrapping_reaches_the_embedder(needle: str) -> None:
    assert needle not in factfile.embed_text(_fact())


def test_context_follows_the_fact() -> None:
    text = factfile.embed_text(_fact(context="Alice: did the standby catch up?"))
    assert text.index(BODY) < text.index("Alice: did the standby catch up?")


def test_a_fact_without_breadcrumb_is_headed_by_its_title() -> None:
    text = factfile.embed_text(_fact(breadcrumb=()))
    assert text.startswith("WAL\n\n")


@pytest.mark.parametrize("text", [
    "how do I turn on streaming replication?",                    # a question
    "# Runbook\n\nRestart the service.",                         # plain markdown
    "---\ntitle: My note\n---\nBody of a note with front matter",  # someone else's front matter
    "---\nnot: [valid\n---\nbody",                               # broken YAML
    "--- a line of dashes ---",
    "",
])
def test_anything_else_passes_unchanged(text: str) -> None:
    assert factfile.embed_text(text) == text


@pytest.mark.parametrize("fact_text", [True, False])
def test_the_sidecar_applies_the_rule_when_on(fact_text: bool) -> None:
    model = RecordingEncoder()
    client = TestClient(create_app(model, 8, "echo", fact_text=fact_text))
    fact = _fact()
    resp = client.post("/v1/embeddings", json={"input": [fact, "what is wal_level?"]})
    assert resp.status_code == 200
    assert model.seen == [factfile.embed_text(fact) if fact_text else fact, "what is wal_level?"]


def test_cached_vectors_are_keyed_by_the_rule(tmp_path) -> None:
    on = DenseScorer(EmbedSettings(fact_text=True), tmp_path / "v.sqlite")
    off = DenseScorer(EmbedSettings(fact_text=False), tmp_path / "v.sqlite")
    try:
        assert on._key("same text") != off._key("same text")
    finally:
        on.close()
        off.close()
