"""Where a long fact is read from (plugins/search/passage.py): the paragraph whose window names most of the
sought words, else the top."""

from __future__ import annotations

import pytest

from muninn.core import factfile
from muninn.plugins.search import doc as docmod
from muninn.plugins.search import passage
from muninn.plugins.search.stages.rerank_stage import rerank_text

INTRO = "This chapter covers the network services a server runs.\n\n"
FILLER = "".join(f"Paragraph {i} talks about something else entirely, at some length.\n\n" for i in range(12))
ANSWER = "To restart the broker, run systemctl restart mosquitto and watch its journal.\n\n"


@pytest.mark.parametrize(("text", "terms"), [
    ("short text that mentions the broker", ["broker"]),      # no longer than the window
    (INTRO + FILLER + ANSWER, []),                              # nothing sought
    (INTRO + FILLER + ANSWER, ["zebra"]),                       # nothing found anywhere
    (ANSWER + FILLER + ANSWER, ["restart", "broker"]),          # the top is as good as any later paragraph
])
def test_read_from_the_top_unless_a_later_paragraph_names_more(text: str, terms: list[str]) -> None:
    assert passage.best_start(text, terms, window=200) == 0
    assert passage.from_best(text, terms, window=200) == text


def test_a_buried_answer_is_read_from_its_paragraph() -> None:
    text = INTRO + FILLER + ANSWER + FILLER
    start = passage.best_start(text, ["restart", "broker", "mosquitto"], window=200)
    assert text[start:].startswith("To restart the broker")
    assert passage.from_best(text, ["broker"], window=200).startswith("… To restart the broker")


@pytest.mark.parametrize("terms", [["restarting", "brokers"], ["restarted"], ["RESTART"], ["mosquitto"]])
def test_words_match_by_their_stem(terms: list[str]) -> None:
    text = INTRO + FILLER + ANSWER
    assert text[passage.best_start(text, [t.lower() for t in terms], window=200):].startswith("To restart")


def test_the_window_counts_distinct_words_not_repeats() -> None:
    repeats = "broker broker broker broker broker broker.\n\n"
    both = "The broker needs a restart after the upgrade.\n\n"
    text = INTRO + FILLER + repeats + FILLER + both + FILLER
    assert text[passage.best_start(text, ["broker", "restart"], window=120):].startswith("The broker needs")


def test_paragraph_starts_are_offsets_of_each_paragraph() -> None:
    text = "one\n\ntwo\n   \nthree"
    assert [text[i:].split("\n")[0] for i in passage.paragraph_starts(text)] == ["one", "two", "three"]


def _doc(body: str, context: str = "") -> docmod.Doc:
    ff = factfile.FactFile(id="n1", source="notes", kind="note", title="Broker", body=body, context=context,
                           breadcrumb=("Runbooks", "MQTT", "Broker"))
    return docmod.parse("viking://resources/notes/n1.md", factfile.render(ff).text)


def test_the_reranker_reads_a_long_fact_from_its_best_paragraph_under_its_breadcrumb() -> None:
    d = _doc(INTRO + FILLER + ANSWER + FILLER, context="In: Runbooks")
    text = rerank_text(d, 1500, ["restart", "mosquitto"], window=200)
    assert text.startswith(factfile.CRUMB.join(["Runbooks", "MQTT", "Broker"]) + "\n… To restart the broker")
    assert "(context:" not in text          # the breadcrumb already says where the passage sits
    # From the top: without terms, with the window off, or when the top is already the best.
    assert rerank_text(d, 1500, [], window=200) == rerank_text(d, 1500)
    assert rerank_text(d, 1500, ["restart"], window=0) == rerank_text(d, 1500)
    assert rerank_text(d, 1500, ["chapter", "network"], window=200) == rerank_text(d, 1500)


def test_a_hit_shows_the_passage_that_answers() -> None:
    d = _doc(INTRO + FILLER + ANSWER + FILLER)
    assert docmod.snippet(d, terms=["mosquitto"], window=200).startswith("… To restart the broker")
    assert docmod.snippet(d).startswith(docmod.snippet(d, terms=["zebra"], window=200)[:40])


def test_a_config_key_is_found_deep_in_a_manual_section() -> None:
    """Another corpus's shape: a PostgreSQL-like section whose setting is named only in a late paragraph."""
    key = "To keep WAL for a standby, set wal_keep_size in postgresql.conf and reload the server.\n\n"
    text = "Replication overview.\n\n" + FILLER + key + FILLER
    assert text[passage.best_start(text, ["wal_keep_size", "standby"], window=200):].startswith("To keep WAL")


def test_a_snippet_never_starts_in_the_neighbouring_context() -> None:
    """The context names the question's words too (a parent section, the turns around): the reader is
    shown the fact, from its own best paragraph."""
    d = _doc(INTRO + FILLER, context="To restart the broker, run systemctl restart mosquitto.")
    assert docmod.snippet(d, terms=["restart", "mosquitto"], window=200).startswith("This chapter covers")
    assert rerank_text(d, 5000, ["restart", "mosquitto"], window=200) == rerank_text(d, 5000)
