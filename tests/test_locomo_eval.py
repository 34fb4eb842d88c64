"""The LoCoMo adapter that the search numbers in evals/results/locomo.md come from: how a
conversation becomes fact files, which questions count, how hits are scored, and one small
run through the real server."""

from __future__ import annotations

import json

import pytest

from muninn.evals.lab import locomo

CONV = {
    "speaker_a": "Caroline", "speaker_b": "Melanie",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Caroline", "dia_id": "D1:1", "text": "I went to a LGBTQ support group yesterday."},
        {"speaker": "Melanie", "dia_id": "D1:2", "text": "That sounds powerful! How did it feel?"},
        {"speaker": "Caroline", "dia_id": "D1:3", "text": "It felt like home.", "blip_caption": "a rainbow flag"},
    ],
    "session_2_date_time": "10:00 am on 25 May, 2023",
    "session_2": [
        {"speaker": "Melanie", "dia_id": "D2:1", "text": "I painted a sunrise over the lake last week."},
        {"speaker": "Caroline", "dia_id": "D2:2", "text": "Lovely! I am reading a book about adoption."},
    ],
    "session_3_date_time": "9:00 am on 1 June, 2023",     # a date with no turns: skipped, not an error
    "qa": [
        {"question": "When did Caroline go to the support group?", "evidence": ["D1:1"], "category": 2},
        {"question": "What did Melanie paint?", "evidence": ["D2:1"], "category": 4},
        {"question": "What is Caroline reading and how did the group feel?", "evidence": ["D2:2; D1:3"],
         "category": 1},
        {"question": "An adversarial one", "evidence": ["D1:2"], "category": 5},      # not scored
        {"question": "No evidence", "evidence": [], "category": 4},                       # not scored
    ],
}


def test_one_fact_file_per_turn_written_by_the_notes_exporter() -> None:
    from muninn.core import factfile

    files = locomo.corpus(CONV, "t")
    assert sorted(locomo.turn_key(u) for u in files) == [
        "session-01/turn-001.md", "session-01/turn-002.md", "session-01/turn-003.md",
        "session-02/turn-001.md", "session-02/turn-002.md"]
    mid = factfile.parse(files[f"{locomo.ROOT}/t/session-01/turn-002.md"])
    assert mid.title == "Melanie, 8 May 2023 at 1:56 PM (session 1)" and "How did it feel?" in mid.body
    assert (mid.date or "").startswith("2023-05-08") and mid.source == "notes"
    assert "[shares a photo: a rainbow flag]" in files[f"{locomo.ROOT}/t/session-01/turn-003.md"]


def test_only_scored_categories_with_evidence_count() -> None:
    qs = locomo.questions(CONV)
    assert [q["category"] for q in qs] == [2, 4, 1]
    assert qs[2]["evidence"] == {"D2:2", "D1:3"}             # "D2:2; D1:3" in one string is two turns


def test_metrics_score_the_first_evidence_file() -> None:
    ranked = [["x/s/a.md", "x/session-01/turn-001.md"], ["x/s/b.md"] * 4 + ["x/session-02/turn-001.md"],
              ["x/s/c.md"]]
    gold = [{"session-01/turn-001.md"}, {"session-02/turn-001.md"}, {"session-09/turn-009.md",
                                                                       "session-01/turn-001.md"}]
    m = locomo.metrics(ranked, gold)
    assert m["hit@4"] == pytest.approx(1 / 3) and m["hit@10"] == pytest.approx(2 / 3)
    assert m["MRR@10"] == pytest.approx((1 / 2 + 1 / 5) / 3)
    assert m["recall@20"] == pytest.approx((1 + 1 + 0) / 3)
    assert locomo.first_ranks(ranked, gold) == [1, 4, None]


def test_with_search_reaches_the_nested_rerank_section(stack) -> None:
    tuned = locomo.with_search(stack.settings, {"vector_top": 40, "rerank.header_blend": 0.0})
    assert tuned.search.vector_top == 40 and tuned.ranking.header_blend == 0.0
    assert tuned.ranking.blend == stack.settings.ranking.blend       # the rest untouched
    with pytest.raises(SystemExit, match="unknown nested"):
        locomo.with_search(stack.settings, {"vault.thing": 1})


@pytest.mark.integration
def test_a_small_run_through_the_real_server(stack, tmp_path) -> None:
    (tmp_path / "t.json").write_text(json.dumps(CONV))
    variants = {"vector only": locomo.VARIANTS["vector only"],
                "+ header match": locomo.VARIANTS["+ header match"]}
    report = locomo.run(stack.settings, ["t"], variants, tmp_path / "work", data=tmp_path)
    for name in variants:
        v = report["variants"][name]
        # Five files and k = 20: every evidence file comes back, so the scoring is what is checked.
        assert (v["n"], v["hit@10"], v["recall@20"]) == (3, 1.0, 1.0)
        assert 0 < v["MRR@10"] <= 1 and set(v["by_category"]) == set(locomo.CATEGORIES.values())
    assert report["variants"]["+ header match"]["hit@4"] == 1.0
    # Per question, per variant: which questions a change moved.
    ranks = report["ranks"]
    assert len(ranks) == 3 * len(variants) and {r["variant"] for r in ranks} == set(variants)
    assert all(r["conversation"] == "t" and r["first"] is not None and r["first"] < 5 for r in ranks)
