"""The `window` fusion feature (search.window_weight): a long fact embedded window by window, its best
window's cosine scored in linear fusion. Through the real parts: the test stack's embedding sidecar, a
real openviking-server and the product's Searcher."""

from __future__ import annotations

import pytest

from muninn.core import factfile
from muninn.core.config import RerankSettings
from muninn.core.ranking_profile import NAMES
from muninn.plugins.search import dense, fact_vectors, keyword, windows
from muninn.plugins.search.pipeline import Searcher

ROOT = "viking://resources/manual"
FILLER = ("This chapter describes the general layout of the configuration and the conventions that the "
          "rest of the manual follows when it names files, options and commands. ")


def _section(name: str, heading: str, paragraphs: list[str]) -> str:
    return factfile.render(factfile.FactFile(
        id=f"manual/{name}.md#{name}", source="notes", kind="note", title=heading, body="\n\n".join(paragraphs),
        breadcrumb=("Manual", heading), source_path=f"manual/{name}.md")).text


# The answer to the question sits in the last paragraph of a long section, past what one vector reads.
SECTIONS = {
    "disk.md": _section("disk", "Disk Space", [FILLER * 3, FILLER * 3, FILLER * 2,
                        "A file that is deleted while a process keeps it open still takes disk space, which "
                        "is why df reports the volume nearly full while du adds up far less."]),
    "users.md": _section("users", "User Accounts", [FILLER * 2, "Accounts are created with adduser."]),
    "net.md": _section("net", "Network", ["Interfaces are configured in /etc/network/interfaces."]),
}
QUESTION = "why does df say the disk is full when du counts much less"


@pytest.mark.parametrize("body, chars, expect", [
    ("short", 600, ["short"]),
    ("a" * 300 + "\n\n" + "b" * 250, 600, ["a" * 300 + "\n\n" + "b" * 250]),
    ("a" * 400 + "\n\n" + "b" * 400, 600, ["a" * 400, "b" * 400]),
    ("whole\n\ntext", 0, ["whole\n\ntext"]),
])
def test_windows_pack_paragraphs_up_to_the_size(body: str, chars: int, expect: list[str]) -> None:
    assert windows.windows(body, chars) == expect


def test_a_paragraph_longer_than_a_window_is_cut_at_sentence_ends() -> None:
    got = windows.windows("One sentence here. " * 60, 600)
    assert len(got) > 1 and all(len(w) <= 600 and w.endswith(".") for w in got)


def test_window_texts_lead_with_the_breadcrumb() -> None:
    got = windows.texts(SECTIONS["disk.md"], 600)
    assert len(got) > 1 and all(t.startswith("Manual › Disk Space\n\n") for t in got)
    assert "du adds up far less" in got[-1] and "du adds up" not in got[0]


@pytest.fixture(scope="module")
def manual(stack, tmp_path_factory):
    _, client = stack.new_account("windows")
    client.ensure_dir(ROOT)
    client.batch_write(ROOT, {f"{ROOT}/{n}": t for n, t in SECTIONS.items()}, wait=True)
    client.wait()
    db = tmp_path_factory.mktemp("windows") / "index.sqlite"
    keyword.index_facts(db, {f"{ROOT}/{n}": t for n, t in SECTIONS.items()})
    yield client, db
    client.close()


def _settings(stack, **search):
    s = stack.settings
    ranked = {k: search.pop(k) for k in list(search) if k in NAMES}
    return s.model_copy(update={"search": s.search.model_copy(
        update={"recency": False, "rerank": RerankSettings(enabled=False), "ranking": {**s.search.ranking, **ranked},
                **search})})


@pytest.mark.integration
def test_window_feature_scores_each_candidate_by_its_best_window(stack, manual) -> None:
    client, db = manual
    settings = _settings(stack, window_weight=1.0)
    with Searcher(settings, client=client, index=db) as s:
        res = s.search(QUESTION, k=3, target=ROOT)
    assert res.warnings == [] and res.hits and res.hits[0].uri == f"{ROOT}/disk.md"
    scorer = dense.DenseScorer(settings.embed)
    try:
        for h in res.hits:
            text = SECTIONS[h.uri.rsplit("/", 1)[1]]
            best = max(scorer.cosines(QUESTION, windows.texts(text, settings.ranking.window_chars)))
            assert h.stage_scores["window_cos"] == pytest.approx(best, abs=1e-4)
    finally:
        scorer.close()
    # The buried paragraph's own window is nearer the question than the section read from its top.
    top = res.hits[0].stage_scores
    assert top["window_cos"] > top["fact_cos"]


@pytest.mark.integration
def test_window_feature_off_computes_nothing(stack, manual) -> None:
    client, db = manual
    settings = _settings(stack)
    assert settings.ranking.window_weight == 0
    with Searcher(settings, client=client, index=db) as s:
        res = s.search(QUESTION, k=3, target=ROOT)
    assert res.hits and all("window_cos" not in h.stage_scores for h in res.hits)
    index = keyword.KeywordIndex(db)
    try:
        plain = fact_vectors.texts(index)
        assert len(plain) == 2 * len(SECTIONS)
        assert len(fact_vectors.texts(index, 600)) > len(plain)      # the nightly fill embeds the windows too
    finally:
        index.close()
