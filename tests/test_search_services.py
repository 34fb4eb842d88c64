"""The stages see the searcher only through `Services` (search/state.py): a real Searcher is one, and
an object missing one of the services is not."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.plugins.search.pipeline import Searcher
from muninn.plugins.search.state import Services

MEMBERS = ("settings", "cfg", "client", "index", "index_problem", "vector", "fetcher", "dense", "second", "watch",
           "readable", "drop_index", "reranker", "rerank_problem", "ranking")


@pytest.fixture
def searcher(tmp_path: Path) -> Iterator[Searcher]:
    client = OpenViking("http://127.0.0.1:9", "unused", timeout=1.0)   # nothing is asked of it
    with Searcher(Settings(), client=client, index=tmp_path / "none.sqlite") as s:
        yield s
    client.close()


def test_the_protocol_names_the_services_the_stages_use() -> None:
    declared = set(Services.__annotations__) | {n for n in vars(Services) if not n.startswith("_")}
    assert declared == set(MEMBERS)


def test_a_searcher_is_the_services(searcher: Searcher) -> None:
    assert isinstance(searcher, Services)


@pytest.mark.parametrize("missing", MEMBERS)
def test_a_searcher_less_one_service_is_not(searcher: Searcher, missing: str) -> None:
    class Partial:
        pass

    part = Partial()
    for name in MEMBERS:
        if name != missing:
            setattr(part, name, getattr(searcher, name))
    assert not isinstance(part, Services)
