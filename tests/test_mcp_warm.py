"""`muninn mcp` warms up in the background: the reader's keyword index is opened and the reranker loaded
and run once before the agent's first search, exactly once whoever comes first, and only for a reader
that may search. A warm-up that fails says nothing; the first search reports the same failure."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from muninn.core import config, policy
from muninn.core.client import OpenViking
from muninn.plugins.mcp.audit import AuditLog
from muninn.plugins.mcp.redaction import ValueRedactor
from muninn.plugins.mcp.session import GuardSession
from muninn.plugins.search import rerank


class SlowModel:
    """A reranker whose load takes `delay` seconds; counts loads and scored pairs."""

    def __init__(self) -> None:
        self.loads = 0
        self.pairs: list[tuple[str, str]] = []
        self.name = "rerank:slow"

    def rerank(self, query: str, docs: list[str]) -> list[float]:
        self.pairs += [(query, d) for d in docs]
        return [0.5] * len(docs)


@pytest.fixture
def session_for(tmp_path: Path, raven_policy) -> Callable[..., GuardSession]:
    """A raven session holding `tools` (recall_search and recall_read unless told)."""

    def build(tools: str = "recall_search, recall_read", rerank_on: bool = True) -> GuardSession:
        raven_policy(tools.split(", "))
        return _session(tmp_path, rerank_on)

    return build


def _session(tmp_path: Path, rerank_on: bool) -> GuardSession:
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"guard": {"policy": "policy.yaml"}, "home": str(tmp_path / "home"),
                                   "search": {"rerank": {"enabled": rerank_on}}}))
    settings = config.load(cfg)
    pol = policy.load(tmp_path / "policy.yaml")
    # A client that is never called (the warm-up talks to no server): a closed port, a dummy key.
    client = OpenViking("http://127.0.0.1:9", "k", key_name="home:raven")
    return GuardSession(settings=settings, policy=pol, profile=pol.profile("raven"), redactor=ValueRedactor({}),
                        audit=AuditLog(tmp_path / "audit.jsonl", str), _client=client)


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> SlowModel:
    m = SlowModel()

    def load(cfg, ranking=None) -> SlowModel:
        m.loads += 1
        time.sleep(0.3)     # long enough for a search to arrive while it loads
        return m

    monkeypatch.setattr(rerank, "load", load)
    return m


@pytest.mark.parametrize("first", ["warm-up", "search", "both at once"])
def test_the_reranker_is_loaded_once_whoever_comes_first(session_for, model: SlowModel, first: str) -> None:
    session = session_for()
    try:
        if first == "warm-up":
            session.warm_up_in_background().join(5)
            got = session.searcher.reranker()
        elif first == "search":
            got = session.searcher.reranker()
            session.warm_up_in_background().join(5)
        else:
            thread = session.warm_up_in_background()
            time.sleep(0.05)            # the warm-up is inside the load now
            got = session.searcher.reranker()
            thread.join(5)
        assert got is model and model.loads == 1
        assert ("warm up", "the model is loaded") in model.pairs   # it ran once, not only loaded
        assert session.searcher.index_problem.startswith("no keyword index")   # the index was looked for
    finally:
        session.close()


def test_a_search_during_the_warm_up_waits_for_it(session_for, model: SlowModel) -> None:
    session = session_for()
    try:
        thread = session.warm_up_in_background()
        time.sleep(0.05)
        searchers = []
        callers = [threading.Thread(target=lambda: searchers.append(session.searcher)) for _ in range(4)]
        for t in callers:
            t.start()
        for t in [*callers, thread]:
            t.join(5)
        assert len({id(s) for s in searchers}) == 1 and model.loads == 1
    finally:
        session.close()


@pytest.mark.parametrize("tools, rerank_on, builds, loads", [
    ("recall_search, recall_read", False, True, 0),     # rerank off: the index only
    ("recall_read, recall_status", True, False, 0),     # no search tool: nothing at all
    ("recall_search", True, True, 1),
])
def test_what_a_reader_warms(session_for, model: SlowModel, tools: str, rerank_on: bool, builds: bool,
                             loads: int) -> None:
    session = session_for(tools, rerank_on)
    try:
        session.warm_up_in_background().join(5)
        assert (session._searcher is not None) is builds
        assert model.loads == loads
    finally:
        session.close()


def test_a_reranker_that_cannot_load_is_said_by_the_search_not_the_warm_up(session_for,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(cfg, ranking=None):
        raise rerank.RerankUnavailable("no weights here", fix="install them")

    monkeypatch.setattr(rerank, "load", fail)
    session = session_for()
    try:
        session.warm_up_in_background().join(5)       # no exception escapes the thread
        assert session.searcher.reranker() is None
        assert "no weights here" in session.searcher.rerank_problem
    finally:
        session.close()


def test_a_searcher_that_cannot_be_built_fails_the_first_search(session_for,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from muninn.plugins.search import pipeline

    def broken(*args, **kwargs):
        raise RuntimeError("index folder unreadable")

    monkeypatch.setattr(pipeline, "Searcher", broken)
    session = session_for()
    try:
        session.warm_up_in_background().join(5)
        with pytest.raises(RuntimeError, match="index folder unreadable"):
            session.searcher.reranker()
    finally:
        session.close()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # the failing warm-up
@pytest.mark.parametrize("warm_fails", [False, True])
def test_a_search_waits_for_a_running_warm_up(session_for, model: SlowModel, monkeypatch: pytest.MonkeyPatch,
                                              warm_fails: bool) -> None:
    """Both load the same C extensions (numpy, the model runtime): a search that ran beside the warm-up
    once met numpy half initialised. It starts when the warm-up has ended, failed or not."""
    session = session_for()
    events: list[str] = []
    warm = session.warm_up

    def slow_warm_up() -> None:
        events.append("warm-up started")
        time.sleep(0.3)
        try:
            if warm_fails:
                raise RuntimeError("no model")
            warm()
        finally:
            events.append("warm-up ended")

    monkeypatch.setattr(session, "warm_up", slow_warm_up)
    try:
        thread = session.warm_up_in_background()
        time.sleep(0.05)
        searcher = session.ready_searcher()
        events.append("search may start")
        assert events == ["warm-up started", "warm-up ended", "search may start"]
        assert searcher is session.searcher
        thread.join(5)
    finally:
        session.close()


def test_without_a_warm_up_a_search_does_not_wait(session_for, model: SlowModel) -> None:
    session = session_for()
    try:
        done = threading.Event()
        threading.Thread(target=lambda: (session.ready_searcher(), done.set()), daemon=True).start()
        assert done.wait(5)
    finally:
        session.close()
