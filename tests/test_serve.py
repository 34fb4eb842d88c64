"""`muninn serve` without the stack: who it serves (identity), where it listens, who may connect,
how errors come back, when it exits, and how `muninn search` falls back when it cannot start."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from muninn.core import config, credentials
from muninn.core.config import Settings
from muninn.plugins.search import serve

NOBODY = 65534


def _settings(home: Path, **search: object) -> Settings:
    path = home / "muninn.yaml"
    home.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"home": str(home), "openviking": {"account": "acme", "user": "ana"},
                                    "search": {"rerank": {"enabled": False}, **search}}))
    return config.load(path)


def _key(s: Settings, account: str, user: str, value: str) -> None:
    credentials.for_server(s).set(credentials.user_key_name(account, user), value)


@pytest.fixture
def short_home() -> Iterator[Path]:
    # A workspace with a short path: the socket stays under it (sockaddr_un holds 108 bytes).
    folder = Path(tempfile.mkdtemp(prefix="mserve-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _variant(s: Settings, what: str) -> Settings:
    if what == "user":
        return s.model_copy(update={"openviking": s.openviking.model_copy(update={"user": "ben"})})
    if what == "account":
        return s.model_copy(update={"openviking": s.openviking.model_copy(update={"account": "other"})})
    if what == "search setting":
        return s.model_copy(update={"search": s.search.model_copy(update={"k": 9})})
    if what == "server port":
        return s.model_copy(update={"server": s.server.model_copy(update={"port": s.server.port + 1})})
    if what == "config file":
        return s.model_copy(update={"source_file": Path("/elsewhere/muninn.yaml")})
    raise AssertionError(what)


@pytest.mark.parametrize("what", ["user", "account", "search setting", "server port", "config file"])
def test_identity_changes_with_whatever_the_search_depends_on(short_home: Path, what: str) -> None:
    s = _settings(short_home)
    _key(s, "acme", "ana", "k1")
    _key(s, "acme", "ben", "k1")
    _key(s, "other", "ana", "k1")
    assert serve.identity(s) == serve.identity(_settings(short_home))
    assert serve.identity(_variant(s, what)) != serve.identity(s)


def test_identity_changes_when_the_key_is_rotated(short_home: Path) -> None:
    s = _settings(short_home)
    _key(s, "acme", "ana", "before")
    before = serve.identity(s)
    _key(s, "acme", "ana", "after")
    assert serve.identity(s) != before


@pytest.mark.parametrize("depth, under_workspace", [(1, True), (12, False)])
def test_socket_sits_under_the_workspace_unless_the_path_is_too_long(tmp_path: Path, depth: int,
                                                                      under_workspace: bool) -> None:
    home = Path("/tmp/m") / "/".join(["abcdefghij"] * depth)
    s = _settings(tmp_path).model_copy(update={"home": home})
    path = serve.socket_path(s, "0" * 24)
    assert len(str(path)) <= 100
    assert path.is_relative_to(home) is under_workspace


class Served:
    def __init__(self, settings: Settings, idle: float) -> None:
        self.settings, self.said = settings, []
        self.path = serve.socket_path(settings, serve.identity(settings))
        self.thread = threading.Thread(target=serve.serve, args=(settings, idle, self.said.append), daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.path.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert self.path.exists(), self.said


@pytest.fixture
def served(short_home: Path) -> Iterator[Served]:
    s = _settings(short_home)
    _key(s, "acme", "ana", "key-of-ana")
    server = Served(s, idle=0)
    yield server
    serve.stop(s)
    server.thread.join(10)


def test_socket_and_its_folder_are_private(served: Served) -> None:
    assert stat.S_IMODE(served.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(served.path.parent.stat().st_mode) == 0o700
    assert serve._ask(served.path, {"op": "ping"}) == {"ok": True, "pid": os.getpid()}


def test_a_second_serve_for_the_same_reader_leaves_the_first(served: Served) -> None:
    said: list[str] = []
    assert serve.serve(served.settings, 0, said.append) == 0
    assert "already runs" in said[0]
    assert serve._ask(served.path, {"op": "ping"}) is not None


def _connect_as(uid: int, path: Path) -> str:
    """In a forked child running as `uid`: what connecting and asking gives ("refused", "silent", "answered")."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: never returns into pytest
        outcome = "error"
        try:
            os.setgid(uid)
            os.setuid(uid)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(5)
                sock.connect(str(path))
                sock.sendall(b'{"op": "ping"}\n')
                outcome = "answered" if sock.recv(4096) else "silent"
        except PermissionError:
            outcome = "refused"
        except (ConnectionResetError, BrokenPipeError):   # closed unread: no answer
            outcome = "silent"
        except OSError as exc:
            outcome = f"error {exc}"
        finally:
            os.write(write_end, outcome.encode())
            os._exit(0)
    os.close(write_end)
    os.waitpid(pid, 0)
    with os.fdopen(read_end) as fh:
        return fh.read()


@pytest.mark.skipif(os.getuid() != 0, reason="switching to another uid needs root")
@pytest.mark.parametrize("loosened, expected", [(False, "refused"), (True, "silent")])
def test_another_user_gets_no_answer(served: Served, loosened: bool, expected: str) -> None:
    """As created, the modes keep another user out; with the modes loosened, the peer check still does."""
    if loosened:
        for folder in [served.path.parent, *served.path.parent.parents]:
            if folder == Path("/"):
                break
            os.chmod(folder, os.stat(folder).st_mode | 0o055)
        os.chmod(served.path, 0o777)
    assert _connect_as(NOBODY, served.path) == expected
    assert serve._ask(served.path, {"op": "ping"}) is not None   # the owner still is


@pytest.mark.parametrize("message, code, words", [
    ({"query": "x", "since": "last tuesday"}, 2, "--since"),
    ({"query": "x", "since": "soon"}, 2, "neither a span"),
])
def test_a_search_error_comes_back_with_its_exit_code(served: Served, message: dict, code: int, words: str) -> None:
    with pytest.raises(serve.ServeError) as err:
        serve.search(served.settings, message, note=lambda m: None)
    assert err.value.exit_code == code and words in str(err.value)


def test_unknown_op_is_refused(served: Served) -> None:
    reply = serve._ask(served.path, {"op": "shell"})
    assert reply is not None and reply["ok"] is False and reply["exit_code"] == 2


def test_it_exits_after_idling(short_home: Path) -> None:
    s = _settings(short_home)
    _key(s, "acme", "ana", "key-of-ana")
    server = Served(s, idle=0.5)
    server.thread.join(15)
    assert not server.thread.is_alive() and not server.path.exists()


def test_stop_ends_it(served: Served) -> None:
    assert serve.stop(served.settings) is True
    served.thread.join(10)
    assert not served.thread.is_alive()
    assert serve.stop(served.settings) is False


@pytest.mark.parametrize("breakage", ["serve folder is a file", "socket is a stale file"])
def test_search_says_so_when_no_warm_process_can_answer(short_home: Path, breakage: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    s = _settings(short_home)
    _key(s, "acme", "ana", "key-of-ana")
    path = serve.socket_path(s, serve.identity(s))
    if breakage == "serve folder is a file":
        path.parent.write_text("not a folder")
    else:
        serve.private_dir(path.parent)
        path.write_text("stale")
        # Nothing can start in time: the spawned process would need the stack's server.
        monkeypatch.setattr(serve, "START_TIMEOUT_S", 0.5)
    notes: list[str] = []
    assert serve.search(s, {"query": "x"}, notes.append) is None
    assert len(notes) == 1 and "searching in this process" in notes[0]
    with contextlib.suppress(FileNotFoundError):
        serve.stop(s)


def test_a_result_crosses_the_socket_whole() -> None:
    """What the warm process sends is what `muninn search` prints: to_dict and back loses nothing."""
    from muninn.plugins.search.types import Hit, SearchResult

    hit = Hit(uri="viking://resources/a.md", title="A", breadcrumb="X > A", score=1.5, stage_scores={"bm25": 2.0},
              date="2025-01-02", snippet="a fact", source="notes")
    for result in (SearchResult(query="q", route="hybrid", hits=[hit, hit], warnings=["w"], timings_ms={"x": 1.0},
                                reranker="m", dates={"from": "2025-01-01"}),
                   SearchResult(query="q", route="keyword", hits=[], briefing="b")):
        assert serve.result_from_dict(result.to_dict()).to_dict() == result.to_dict()
