"""The content stage's cache: a doc always carries the URI it was read for."""

from __future__ import annotations

from muninn.plugins.search.stages.content import ContentFetcher

SAME = "---\ntitle: Nightly backup job\n---\n# Nightly backup job\nThe nightly backup job copies the volumes.\n"


class _Texts:
    """The keyword index's one method the fetcher reads."""

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts
        self.reads: list[str] = []

    def text(self, uri: str) -> str | None:
        self.reads.append(uri)
        return self.texts.get(uri)


def test_two_files_with_the_same_bytes_stay_two_docs_across_fetches() -> None:
    a, b = "viking://resources/dup/backup-old.md", "viking://resources/other/backup-new.md"
    index = _Texts({a: SAME, b: SAME})
    fetcher = ContentFetcher(None, index)   # type: ignore[arg-type]
    first = fetcher.fetch([a, b])
    assert {u: d.uri for u, d in first.items()} == {a: a, b: b}
    # Later questions ask again, in either order: each URI gets its own doc from the cache.
    for order in ([b], [b, a], [a]):
        again = fetcher.fetch(order)
        assert {u: d.uri for u, d in again.items()} == {u: u for u in order}
        assert {u: d.file_key for u, d in again.items()} == {u: u for u in order}   # the per-file cap
        assert {u: d.source for u, d in again.items()} == {u: u.split("/")[3] for u in order}
    assert sorted(index.reads) == sorted([a, b])   # read once each
