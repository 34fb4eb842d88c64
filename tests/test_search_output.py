"""What `muninn search` prints: URIs whole on their own line, no boxes or hard wraps in any mode, and the
relevance judgement (`--min-score`, "no strong match") from the hits' absolute relevance."""

from __future__ import annotations

import pytest

from muninn.plugins.search import relevance, render
from muninn.plugins.search.types import Hit, SearchResult

BOX = set("╭╮╰╯│─┏┓┗┛┃━┌┐└┘┬┴├┤┼")

URIS = [
    "viking://resources/shared/runbooks/restic-restore.md",
    "viking://resources/shared/" + "/".join(["a-very-long-folder-name"] * 12) + "/deep-fact.md",
    "viking://resources/shared/notes/2025-05-14-ünïcode-ßection.md",
    "viking://resources/shared/path with spaces/and (parens) [brackets].md",
    "viking://resources/agents/raven/" + "x" * 400 + ".md",
]


def _hit(uri: str, relevance_: float | None = 0.8, title: str = "Restore one file", snippet: str = "restic mount",
         date: str | None = "2025-05-14T00:00:00+00:00") -> Hit:
    return Hit(uri=uri, title=title, breadcrumb="runbooks", score=1.234, stage_scores={}, date=date,
               snippet=snippet, source="notes", relevance=relevance_)


def _result(hits: list[Hit], query: str = "restore a single file") -> SearchResult:
    return SearchResult(query=query, route="hybrid", hits=hits, reranker="cross-encoder/ms-marco-MiniLM-L-12-v2")


@pytest.mark.parametrize("mode", [render.text, render.markdown, render.files], ids=lambda f: f.__name__)
@pytest.mark.parametrize("uri", URIS, ids=range(len(URIS)))
def test_a_uri_is_never_cut(mode, uri: str) -> None:
    out = mode(_result([_hit(uri), _hit(URIS[0])]))
    assert not BOX & set(out)
    if mode is render.markdown:
        assert f"(<{uri}>)" in out
    else:
        # Whole, on a line of its own (indent aside): copy the line, paste it into `muninn read`.
        assert uri in [line.strip() for line in out.splitlines()]


LONG_SNIPPET = "word " * 400


@pytest.mark.parametrize("snippet", ["", "short", LONG_SNIPPET, "line one\nline two\n\n  line three",
                                     "tabs\tand\r\nCRLF"], ids=range(5))
@pytest.mark.parametrize("title", ["", "A title", "T" * 300, "brackets ] [ and * stars"], ids=range(4))
def test_text_has_a_fixed_shape_whatever_the_hit(snippet: str, title: str) -> None:
    """Title line, URI line, at most one snippet line, blank: no wrap, however long or ragged the parts."""
    hits = [_hit(URIS[0], title=title, snippet=snippet), _hit(URIS[1], relevance_=None, date=None)]
    lines = render.text(_result(hits)).splitlines()
    body = lines[2:]
    per_hit = [group.count("\n") + 1 for group in "\n".join(body).split("\n\n") if group]
    assert all(n in (2, 3) for n in per_hit), lines
    assert body[0].startswith("1. ") and body[1].strip() == URIS[0]
    assert all(len(line) < 700 for line in lines)


def test_text_shows_relevance_and_score_and_says_when_there_is_no_relevance() -> None:
    out = render.text(_result([_hit(URIS[0], relevance_=0.8123), _hit(URIS[1], relevance_=None)]))
    first, second = [line for line in out.splitlines() if line[:2] in ("1.", "2.")]
    assert "relevance 0.81" in first and "score 1.234" in first and "2025-05-14" in first
    assert "relevance" not in second and "score 1.234" in second


@pytest.mark.parametrize("mode", [render.text, render.markdown, render.files], ids=lambda f: f.__name__)
def test_nothing_found(mode) -> None:
    out = mode(_result([]))
    assert out == "" if mode is render.files else "nothing found" in out


def test_files_is_uris_only_best_first() -> None:
    assert render.files(_result([_hit(u) for u in URIS])).splitlines() == URIS


def test_a_multiline_query_stays_on_the_header_line() -> None:
    out = render.text(_result([_hit(URIS[0])], query="line one\nline two\n" + "log " * 3000))
    assert out.splitlines()[0].startswith("line one line two") and len(out.splitlines()[0]) < 300


# (relevances best first, strong, min_score, kept, warns "no strong match")
JUDGED = [
    ([0.9, 0.5, 0.01], 0.1, None, 3, False),
    ([0.09, 0.05], 0.1, None, 2, True),
    ([0.1], 0.1, None, 1, False),             # at the threshold is strong enough
    ([0.0], 0.1, None, 1, True),
    ([0.9, 0.5, 0.01], 0.1, 0.3, 2, False),
    ([0.9, 0.5, 0.01], 0.1, 0.95, 0, False),  # filtered to nothing, but the best was strong
    ([0.05, 0.02], 0.1, 0.03, 1, True),
    ([0.5, 0.5], 0.1, 0.5, 2, False),         # min_score keeps equal
    ([0.8, None], 0.1, 0.5, 2, False),        # a hit the reranker did not see is not dropped
    ([], 0.1, 0.5, 0, False),
    ([], 0.1, None, 0, False),
    ([None, None], 0.1, None, 2, False),      # no reranker: no relevance, nothing claimed
    ([0.9, 0.5], 0.0, 0.0, 2, False),
]


@pytest.mark.parametrize("scores, strong, min_score, kept, weak", JUDGED, ids=range(len(JUDGED)))
def test_relevance_judgement(scores, strong: float, min_score: float | None, kept: int, weak: bool) -> None:
    hits, said = relevance.judge([_hit(f"viking://r/{i}.md", s) for i, s in enumerate(scores)], strong, min_score)
    assert len(hits) == kept
    assert any("no strong match" in m for m in said) == weak


def test_min_score_without_any_relevance_says_it_was_not_applied() -> None:
    hits, said = relevance.judge([_hit("viking://r/a.md", None)], 0.1, 0.5)
    assert len(hits) == 1 and said and "not applied" in said[0]


@pytest.mark.parametrize("stage_scores, expected", [
    ({"rerank": 0.912345678}, 0.9123), ({"rerank": 0.0}, 0.0), ({}, None), ({"bm25": 3.2}, None)])
def test_an_uncalibrated_reranker_keeps_its_probability(stage_scores: dict, expected: float | None) -> None:
    assert relevance.of(stage_scores) == expected
    assert relevance.of(stage_scores, "some/other-reranker") == expected


@pytest.mark.parametrize("model", sorted(relevance.CALIBRATION))
def test_calibrated_relevance_is_monotone_and_within_0_1(model: str) -> None:
    probabilities = [0.0, 1e-9, 1e-6, 1e-4, 0.001, 0.01, 0.05, 0.2, 0.5, 0.8, 0.95, 0.999, 1 - 1e-9, 1.0]
    got = [relevance.of({"rerank": p}, model) for p in probabilities]
    assert all(isinstance(r, float) and 0.0 <= r <= 1.0 for r in got)
    assert got == sorted(got) and got[0] < got[-1]
    assert relevance.of({}, model) is None


def test_the_calibration_lab_and_the_product_read_a_curve_alike() -> None:
    from muninn.evals.lab.corpora import calibrate

    curve = (0.3, 0.8, -0.5)
    probe = calibrate.Shown("q", 1, 0.3, 0.9, False, False)
    saved = dict(relevance.CALIBRATION)
    relevance.CALIBRATION["lab/probe"] = curve
    try:
        assert relevance.of({"rerank": probe.p}, "lab/probe", probe.best) == pytest.approx(
            calibrate.relevance(probe, curve), abs=1e-4)
    finally:
        relevance.CALIBRATION.clear()
        relevance.CALIBRATION.update(saved)


def test_a_hit_below_the_best_is_less_relevant_than_the_same_score_alone() -> None:
    model = next(iter(relevance.CALIBRATION))
    alone, below = relevance.of({"rerank": 0.6}, model), relevance.of({"rerank": 0.6}, model, best=0.99)
    assert below is not None and alone is not None and below <= alone
