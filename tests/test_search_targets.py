"""Many folders, one ranking: a search over several targets is one pipeline run over the union of
their candidates (fused and reranked once), not one run per folder merged by scores that were
z-scored within each run. Against the real server and keyword index."""

from __future__ import annotations

from typing import Any

import pytest

from muninn.core.config import Settings
from muninn.plugins.search import keyword
from muninn.plugins.search.pipeline import Searcher
from muninn.plugins.search.types import Candidate

pytestmark = pytest.mark.integration

ROOT = "viking://resources/tg"
A, B, C = f"{ROOT}/a", f"{ROOT}/b", f"{ROOT}/c"
QUERY = "postgres snapshot rollback"


def _fact(title: str, body: str) -> str:
    return f"---\nsource: notes\ndate: 2025-05-01\n---\n# {title}\n{body}\n"


# A holds one weak hit (one query word) among unrelated files: within a run over A alone it is the
# best by far. B holds two strong ones. C holds a strong one that a search of A and B must not see.
FACTS = {
    f"{A}/host.md": _fact("Database host", "Postgres runs on db01 behind the VPN."),
    f"{A}/wifi.md": _fact("Office wifi", "The office wifi password rotates monthly."),
    f"{A}/lunch.md": _fact("Lunch", "Lunch is at noon on Fridays in the kitchen."),
    f"{B}/rollback.md": _fact("Rollback", "Postgres rollback: restore the snapshot and repoint the app."),
    f"{B}/nightly.md": _fact("Nightly", "A postgres snapshot is taken every night by the backup job."),
    f"{B}/printer.md": _fact("Printer", "The printer on floor two jams on thick paper."),
    f"{C}/restore.md": _fact("Restore", "Postgres rollback from a snapshot, step by step."),
}


class WordShare:
    """A deterministic cross-encoder stand-in: the share of the query's words in the text. Counts its
    calls, so a test sees how many times the model ran for one question."""

    name = "word-share"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def rerank(self, query: str, docs: Any) -> list[float]:
        self.calls.append(query)
        words = query.lower().split()
        return [sum(w in d.lower() for w in words) / len(words) for d in docs]


class Filtered:
    """A candidate source (vector or keyword index) searched at the parent and cut to some folders:
    the reference a many-folder search must equal."""

    def __init__(self, inner: Any, folders: list[str]) -> None:
        self._inner, self._folders = inner, folders

    def _inside(self, uri: str) -> bool:
        return any(uri.startswith(f + "/") for f in self._folders)

    def candidates(self, query: str, target: str, limit: int, **kw: Any) -> list[Candidate]:
        assert target == ROOT
        return [c for c in self._inner.candidates(query, target, limit, **kw) if self._inside(c.uri)][:limit]

    def header_share(self, words: list[str], targets: Any = None) -> dict[str, float]:
        return self._inner.header_share(words, self._folders)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@pytest.fixture(scope="module")
def corpus(stack, tmp_path_factory):
    _, client = stack.new_account("tgt")
    for folder in (A, B, C):
        client.ensure_dir(folder)
        client.batch_write(folder, {u: t for u, t in FACTS.items() if u.startswith(folder + "/")}, wait=True)
    client.wait()
    db = tmp_path_factory.mktemp("kw") / "index.sqlite"
    keyword.index_facts(db, FACTS)
    yield client, db
    client.close()


def _settings(stack) -> Settings:
    s = stack.settings
    ranking = {**s.search.ranking, "blend": 0.0, "header_blend": 0.0, "min_confidence": 0.0}
    return s.model_copy(update={"search": s.search.model_copy(update={"recency": False, "ranking": ranking})})


def _ranks(result) -> list[tuple[str, float]]:
    return [(h.uri, h.score) for h in result.hits]


def test_two_targets_are_one_run_equal_to_the_parent_cut_to_them(stack, corpus) -> None:
    client, db = corpus
    model = WordShare()
    with Searcher(_settings(stack), client=client, index=db, reranker=model) as s:
        both = s.search(QUERY, k=8, target=[A, B])
        assert model.calls == [QUERY]                     # reranked once for the question, not once per folder
        s.vector, s.index = Filtered(s.vector, [A, B]), Filtered(s.index, [A, B])
        model.calls.clear()
        parent = s.search(QUERY, k=8, target=ROOT)
        assert model.calls == [QUERY]
    assert both.warnings == [] and parent.warnings == []
    uris = [u for u, _ in _ranks(both)]
    assert set(uris) == {u for u in FACTS if not u.startswith(C + "/")}
    assert [u for u, _ in _ranks(parent)] == uris
    assert [sc for _, sc in _ranks(both)] == pytest.approx([sc for _, sc in _ranks(parent)])


def test_a_strong_hit_of_b_outranks_a_weak_hit_of_a(stack, corpus) -> None:
    client, db = corpus
    with Searcher(_settings(stack), client=client, index=db, reranker=WordShare()) as s:
        both = s.search(QUERY, k=8, target=[A, B])
        # What the old merge did: one run per folder, the union sorted by each run's own scores.
        per_run = sorted(s.search(QUERY, k=8, target=A).hits + s.search(QUERY, k=8, target=B).hits,
                         key=lambda h: -h.score)
    uris = [h.uri for h in both.hits]
    weak, second = f"{A}/host.md", f"{B}/nightly.md"
    assert uris[:3] == [f"{B}/rollback.md", second, weak]
    assert both.hits[1].stage_scores["rerank"] > both.hits[2].stage_scores["rerank"]
    # The construction matters: per-run scores put the weak hit of A above B's second one.
    old = [h.uri for h in per_run]
    assert old.index(weak) < old.index(second), old


@pytest.mark.parametrize(("given", "want"), [
    (None, (ROOT,)), ([], (ROOT,)), (A, (A,)), (f"{A}/", (A,)), ([A, B], (A, B)), ([A, A + "/"], (A,)),
    ([A, f"{A}/sub", B], (A, B)), ([f"{A}/sub", A], (A,)), ([f"{ROOT}/ab", A], (f"{ROOT}/ab", A)),
])
def test_targets_are_each_searched_once(given, want) -> None:
    from muninn.plugins.search.request import targets_of

    assert targets_of(given, ROOT) == want
