"""A day the query names, against the real server: the files dated then come in as their own
candidate list and are scored on a date match, in fusion and again after the rerank."""

from __future__ import annotations

import pytest
from rerank_model import ReverseReranker

from muninn.core.config import RerankSettings
from muninn.core.ranking_profile import NAMES
from muninn.plugins.search import keyword
from muninn.plugins.search.pipeline import Searcher

pytestmark = pytest.mark.integration

ROOT = "viking://resources/obslog"


def _obs(date: str, text: str) -> str:
    return f"---\nsource: observations\nkind: observation\ndate: \"{date}\"\n---\n# Backup check\n{text}\n"


# Five nights of the same job. 3 June says least about "nightly backup failed", so neither the
# vector nor the keyword top 2 holds it: only the day the question names can bring it in.
LOG = {
    "d1.md": _obs("2025-06-01T06:00:00+00:00", "The nightly backup failed: the restic repository was "
                  "locked by a stale nightly backup process."),
    "d2.md": _obs("2025-06-02T06:00:00+00:00", "The nightly backup failed again, the restic repository "
                  "was still locked after the nightly run."),
    "d3.md": _obs("2025-06-03T06:00:00+00:00", "Backup exited early: the object storage credentials "
                  "had expired overnight."),
    "d5.md": _obs("2025-06-05T06:00:00+00:00", "The nightly backup failed with a restic lock timeout "
                  "during the nightly window."),
    "d7.md": _obs("2025-06-07T06:00:00+00:00", "The nightly backup failed, restic could not lock the "
                  "repository for the nightly snapshot."),
}
QUESTION = "Why did the nightly backup fail on 3 June 2025?"


@pytest.fixture(scope="module")
def log(stack, tmp_path_factory):
    _, client = stack.new_account("dates")
    client.ensure_dir(ROOT)
    files = {f"{ROOT}/{n}": t for n, t in LOG.items()}
    client.batch_write(ROOT, files, wait=True)
    client.wait()
    db = tmp_path_factory.mktemp("dates") / "index.sqlite"
    keyword.index_facts(db, files)
    yield client, db
    client.close()


def _settings(stack, **search):
    s = stack.settings
    ranked = {k: search.pop(k) for k in list(search) if k in NAMES}
    return s.model_copy(update={"search": s.search.model_copy(update={
        "recency": False, "vector_top": 2, "keyword_top": 2, "rerank": RerankSettings(enabled=False),
        "ranking": {**s.search.ranking, **ranked}, **search})})


def _names(res) -> list[str]:
    return [h.uri.rsplit("/", 1)[-1] for h in res.hits]


def test_the_named_day_brings_its_file_into_the_candidates(stack, log) -> None:
    client, db = log
    with Searcher(_settings(stack), client=client, index=db) as s:
        on = s.search(QUESTION, k=5, target=ROOT)
        off = s.search(QUESTION, k=5, target=ROOT, dates=False)
    assert on.warnings == [] and "dated" in on.timings_ms and "dated" not in off.timings_ms
    assert on.to_dict()["dates"] == {"from": "2025-06-03", "to": "2025-06-03", "slack_days": 1,
                                     "searched": "Why did the nightly backup fail?"}
    assert off.dates is None and "dates" not in off.to_dict()
    assert "d3.md" in _names(on) and "d3.md" not in _names(off)
    by = {n: h.stage_scores for n, h in zip(_names(on), on.hits, strict=True)}
    assert by["d3.md"]["date"] == 1.0 and by["d3.md"]["linear"] is not None
    assert by.get("d2.md", {}).get("date", 0.5) == 0.5          # the day before still half-matches
    assert all("date" not in h.stage_scores for h in off.hits)


def test_the_date_match_orders_the_fusion(stack, log) -> None:
    client, db = log
    with Searcher(_settings(stack, date_weight=10.0), client=client, index=db) as s:
        heavy = s.search(QUESTION, k=5, target=ROOT)
    with Searcher(_settings(stack, date_weight=0.0), client=client, index=db) as s:
        zero = s.search(QUESTION, k=5, target=ROOT)
    assert _names(heavy)[0] == "d3.md"
    # Weight 0 keeps the list (the file is a candidate) but not the feature: it no longer leads.
    assert "d3.md" in _names(zero) and _names(zero)[0] != "d3.md"
    assert all(h.stage_scores["date"] in (0.0, 0.5, 1.0) for h in zero.hits)


def test_a_query_without_a_day_is_untouched(stack, log) -> None:
    client, db = log
    q = "why did the nightly backup fail"
    with Searcher(_settings(stack), client=client, index=db) as s:
        plain, off = s.search(q, k=5, target=ROOT), s.search(q, k=5, target=ROOT, dates=False)
    assert [(h.uri, h.score) for h in plain.hits] == [(h.uri, h.score) for h in off.hits]
    assert "dated" not in plain.timings_ms and all("date" not in h.stage_scores for h in plain.hits)


def test_date_blend_after_the_rerank(stack, log) -> None:
    client, db = log
    orders = {}
    for date_blend in (0.0, 100.0):
        cfg = RerankSettings(blend=0.0, header_blend=0.0, date_blend=date_blend)
        # date_weight 10: fusion puts 3 June first, so a reranker that reverses fusion puts it last.
        with Searcher(_settings(stack, rerank=cfg, date_weight=10.0), client=client, index=db,
                      reranker=ReverseReranker()) as s:
            res = s.search(QUESTION, k=5, target=ROOT)
        orders[date_blend] = [(n, h.stage_scores["date"]) for n, h in zip(_names(res), res.hits, strict=True)]
    assert orders[0.0][-1] == ("d3.md", 1.0)
    # A dominating date blend: best date match first, the reranker's order among equals.
    assert orders[100.0] == sorted(orders[0.0], key=lambda nd: -nd[1])
    assert orders[100.0][0] == ("d3.md", 1.0)


def test_a_named_day_turns_the_recency_prior_off(stack, log) -> None:
    client, db = log
    with Searcher(_settings(stack, recency=True), client=client, index=db) as s:
        dated = s.search(QUESTION, k=5, target=ROOT)
        undated = s.search("why did the nightly backup fail", k=5, target=ROOT)
        off = s.search(QUESTION, k=5, target=ROOT, dates=False)
    # It asks about 3 June, not about the newest night: no stage nudges the later files up.
    assert "recency" not in dated.timings_ms and all("recency" not in h.stage_scores for h in dated.hits)
    assert "recency" in undated.timings_ms and all("recency" in h.stage_scores for h in undated.hits)
    assert "recency" in off.timings_ms          # with the date feature off, the question is undated


MONTH = "viking://resources/convention"
# Two notes that spell the month in their titles, and the one that answers, written the month
# after: "last month". Each list keeps only its best file, so the answer comes in only if the
# month's words are left out of what the vectors and BM25 look for.
MONTH_FILES = {
    "m1.md": "---\ndate: \"2023-03-10T09:00:00+00:00\"\n---\n# March 2023 planning, John\n"
             "John's plan with his colleagues for March 2023: the goals for March 2023.\n",
    "m2.md": "---\ndate: \"2023-03-24T09:00:00+00:00\"\n---\n# March 2023 review, John\n"
             "What John shipped in March 2023, and what slipped to April.\n",
    "a.md": "---\ndate: \"2023-04-18T09:00:00+00:00\"\n---\n# Convention\n"
            "John: my colleagues and I attended a convention together last month, on tech for good.\n",
}
# Notes of other days, so that a word in two files still weighs something in BM25.
MONTH_FILES |= {f"n{i}.md": f"---\ndate: \"2023-05-0{i}T09:00:00+00:00\"\n---\n# {topic}\n{topic}.\n"
                for i, topic in enumerate(["Rotated the TLS certificates", "Resized the Postgres volume",
                                           "Pinned the base image digest", "Cleaned up stale DNS records"], 1)}
MONTH_QUESTION = "What did John attend with his colleagues in March 2023?"


def test_the_named_days_are_not_searched_as_words(stack, tmp_path) -> None:
    _, client = stack.new_account("month-words")
    client.ensure_dir(MONTH)
    files = {f"{MONTH}/{n}": t for n, t in MONTH_FILES.items()}
    client.batch_write(MONTH, files, wait=True)
    client.wait()
    db = tmp_path / "index.sqlite"
    keyword.index_facts(db, files)
    with Searcher(_settings(stack, vector_top=1, keyword_top=1), client=client, index=db) as s:
        on = s.search(MONTH_QUESTION, k=5, target=MONTH)
        off = s.search(MONTH_QUESTION, k=5, target=MONTH, dates=False)
    client.close()
    assert on.dates["searched"] == "What did John attend with his colleagues?"
    # With the month's words, the one best file of both lists is a March title; without them it is
    # the answer, and the dated list still brings a file of the month.
    assert _names(off) == ["m1.md"]
    assert _names(on)[0] == "a.md" and "vector" in on.hits[0].stage_scores
    assert {"m1.md", "m2.md"} & set(_names(on))
