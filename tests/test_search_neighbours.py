"""Neighbour expansion: a fact's `<!-- neighbours -->` line, which paths are safe to follow
(URI tricks must not leave the target), and the stage inside the pipeline against the real
server, embedding sidecar and the packaged cross-encoder."""

from __future__ import annotations

import pytest

from muninn.core.config import Settings
from muninn.plugins.search import doc, keyword, rerank
from muninn.plugins.search import neighbours as nb
from muninn.plugins.search.pipeline import Searcher
from muninn.plugins.search.stages import Reranker

ROOT = "viking://resources"
HERE = f"{ROOT}/trip/d1_5.md"
TARGET = f"{ROOT}/trip"


def test_line_is_parsed_and_kept_out_of_what_is_read() -> None:
    text = ("---\ndate: 2023-05-08\n---\nJohn said:\nAny suggestions?\n\n<!-- neighbours: d1_4.md d1_6.md -->\n"
            "<!-- context -->\nTim: hi\n")
    d = doc.parse(HERE, text)
    assert d.neighbours == ("d1_4.md", "d1_6.md")
    assert "neighbours" not in d.body and "d1_4" not in d.fact + d.context
    assert (d.fact, d.context) == ("John said:\nAny suggestions?", "Tim: hi")
    assert d.text == text                      # the file as OpenViking has it, for the file cosine
    assert doc.parse(HERE, "no pointer <!-- neighbours: x.md --> inline\n").neighbours == ()


@pytest.mark.parametrize(("rel", "want"), [
    ("d1_4.md", f"{TARGET}/d1_4.md"),
    ("sub/step-2.md", f"{TARGET}/sub/step-2.md"),
    ("../trip/d1_6.md", f"{TARGET}/d1_6.md"),          # climbs out and back in: still under the target
])
def test_safe_relative_paths_resolve_under_the_target(rel: str, want: str) -> None:
    assert nb.resolve(HERE, rel, TARGET) == want


@pytest.mark.parametrize("rel", [
    "../secret.md",                      # out of the target
    "../../../../etc/passwd.md",
    "..%2fsecret.md", "%2e%2e/secret.md",  # percent-encoding is never decoded, so never followed
    "/trip/d1_4.md",                     # absolute
    "viking://resources/other/x.md",     # another URI
    "viking:/resources/trip/x.md",
    "sub//x.md", "./d1_4.md", "sub\\..\\..\\x.md",
    "d1_4.txt", "", "d1_5.md",           # not a fact file; empty; itself
    "D1_4.md/../../../other/x.md",
])
def test_tricks_are_not_followed(rel: str) -> None:
    assert nb.resolve(HERE, rel, TARGET) is None


def test_case_does_not_widen_the_target() -> None:
    upper = f"{ROOT}/TRIP/d1_5.md"
    assert nb.resolve(upper, "d1_4.md", TARGET) is None


def test_of_keeps_order_skips_known_and_dedupes() -> None:
    a = doc.Doc(uri=f"{TARGET}/a.md", text="", body="", neighbours=("b.md", "c.md"))
    b = doc.Doc(uri=f"{TARGET}/b.md", text="", body="", neighbours=("a.md", "c.md", "../x.md"))
    assert nb.of([a, b], TARGET, skip={f"{TARGET}/a.md"}) == [(f"{TARGET}/b.md", a.uri), (f"{TARGET}/c.md", a.uri)]


# --- inside the pipeline, against the real server ---

def _fact(text: str, near: list[str]) -> str:
    return f"---\nsource: chat\ndate: 2025-05-01\n---\n{text}\n\n<!-- neighbours: {' '.join(near)} -->\n"


FILES = {
    "trip/ask.md": _fact("John: We are planning a team trip next month and still choosing where to go. "
                         "Any suggestions for the team trip?",
                         ["answer.md", "../other/private.md", "%2e%2e/other/private.md", "../TRIP/wifi.md"]),
    "trip/answer.md": _fact("Tim: Edinburgh in Scotland would be great, a magical vibe with old castles.",
                            ["ask.md", "backup.md"]),
    "trip/wifi.md": _fact("The office wifi password rotates monthly.", []),
    "trip/backup.md": _fact("Nightly backups go to object storage at 01:00.", []),
    "other/private.md": _fact("Edinburgh team trip budget: private numbers.", []),
}


class Counting:
    """The packaged cross-encoder, counting the pairs it is asked to score."""

    def __init__(self, inner: Reranker) -> None:
        self.inner, self.name, self.model, self.pairs = inner, inner.name, getattr(inner, "model", None), []

    def rerank(self, query: str, docs: list[str]) -> list[float]:
        self.pairs += list(docs)
        return self.inner.rerank(query, docs)


@pytest.fixture(scope="module")
def corpus(stack, tmp_path_factory):
    _, client = stack.new_account("nbr")
    files = {f"{ROOT}/{p}": t for p, t in FILES.items()}
    for folder in ("trip", "other"):
        client.ensure_dir(f"{ROOT}/{folder}")
        client.batch_write(f"{ROOT}/{folder}", {u: t for u, t in files.items() if f"/{folder}/" in u}, wait=True)
    client.wait()
    db = tmp_path_factory.mktemp("kw") / "index.sqlite"
    keyword.index_facts(db, files)
    yield client, db
    client.close()


@pytest.fixture(scope="module")
def packaged():
    return rerank.load(Settings().search.rerank.model_copy(update={"model": "cross-encoder/ms-marco-MiniLM-L-12-v2",
                                                                   "fallbacks": []}))


def _searcher(stack, corpus, packaged) -> tuple[Searcher, Counting, list[str]]:
    client, db = corpus
    s = stack.settings
    # One candidate from each retriever: the answer shares no word with the question, so only its
    # neighbour can bring it in.
    settings = s.model_copy(update={"search": s.search.model_copy(update={
        "vector_top": 1, "keyword_top": 1, "recency": False, "neighbours": 3})})
    counting = Counting(packaged)
    searcher = Searcher(settings, client=client, index=db, reranker=counting)
    fetched: list[str] = []
    fetch = searcher.fetcher.fetch
    searcher.fetcher.fetch = lambda uris: (fetched.extend(uris), fetch(uris))[1]   # type: ignore[method-assign]
    return searcher, counting, fetched


@pytest.mark.integration
def test_the_answer_next_to_a_hit_is_reranked_in(stack, corpus, packaged) -> None:
    searcher, counting, fetched = _searcher(stack, corpus, packaged)
    with searcher:
        off = searcher.search("Where should the team trip go?", target=TARGET, k=4, neighbours=False)
        assert [h.uri for h in off.hits] == [f"{TARGET}/ask.md"]
        counting.pairs.clear()
        res = searcher.search("Where should the team trip go?", target=TARGET, k=4)
    assert res.warnings == []
    by_uri = {h.uri: h for h in res.hits}
    assert set(by_uri) == {f"{TARGET}/ask.md", f"{TARGET}/answer.md"}
    answer = by_uri[f"{TARGET}/answer.md"]
    assert answer.stage_scores["neighbour"] == 1.0 and "rerank" in answer.stage_scores
    assert {"file_cos", "fact_cos", "linear"} <= set(answer.stage_scores)    # fused like any candidate
    assert "neighbours" in res.timings_ms
    assert len(counting.pairs) == 2                 # the hit once, its neighbour once: nothing twice
    # ask.md also names files outside the target (plainly, percent-encoded, another case): none is
    # read; answer.md's own neighbours are not followed (one hop from the reranked hits).
    assert not any("/other/" in u or "%" in u or "TRIP" in u or "backup" in u for u in fetched)
    assert all(h.uri.startswith(TARGET + "/") for h in res.hits)


@pytest.mark.integration
def test_nothing_happens_without_rerank(stack, corpus, packaged) -> None:
    searcher, counting, _ = _searcher(stack, corpus, packaged)
    with searcher:
        res = searcher.search("Where should the team trip go?", target=TARGET, k=4, rerank=False)
    assert [h.uri for h in res.hits] == [f"{TARGET}/ask.md"] and counting.pairs == []
    assert "neighbours" not in res.timings_ms
