"""`muninn serve`: a warm search process for one reader, reached on a unix socket only its owner can use.

A fresh `muninn search` spends seconds loading the reranker; a warm process answers in the time of the
search itself. One process per identity: the reader (account, user, a hash of its key), its settings
and muninn's version, so a different reader, a rotated key or an edited muninn.yaml never reach a
process started for another. The socket sits in a 0700 folder under the workspace, is 0600 itself, and
the process answers only a peer of its own uid (SO_PEERCRED); the client checks the same of the server.
`muninn search` starts one on demand and it exits after `search.serve_idle` seconds without a search.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import socket
import socketserver
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from muninn import __version__
from muninn.core import atomic
from muninn.core.config import Settings
from muninn.core.errors import ExitCode, MuninnError
from muninn.plugins.search.types import Hit, SearchResult

if TYPE_CHECKING:
    from muninn.core.policy import Profile

START_TIMEOUT_S = 60.0     # loading a cross-encoder on a busy 2-core machine takes seconds, not minutes
REPLY_TIMEOUT_S = 300.0    # one search, as long as the server's own timeout allows
MAX_REQUEST = 1 << 20
_SUN_PATH_MAX = 100        # sockaddr_un holds 108 bytes; a deep workspace moves the socket to the temp dir


class ServeError(MuninnError):
    """`muninn serve` could not start, or a search it ran failed with this error."""

    exit_code = ExitCode.CHECK_FAILED

    def __init__(self, message: str, *, fix: str | None = None, exit_code: int | None = None) -> None:
        super().__init__(message, fix=fix)
        if exit_code is not None:
            self.exit_code = exit_code


def identity(settings: Settings, reader: Profile | None = None) -> str:
    """Who and what a warm process serves; a change to any part of it means another process. `reader`: a
    policy reader (its account, user, key, areas and index), else the configured identity."""
    from muninn.core import credentials

    account, user = _who(settings, reader)
    key = credentials.for_server(settings).get(credentials.user_key_name(account, user)) or ""
    blob = json.dumps({"version": __version__, "uid": os.getuid(), "settings": settings.model_dump(mode="json"),
                       "source": str(settings.source_file), "key": hashlib.sha256(key.encode()).hexdigest(),
                       **({"reader": reader.name, "reads": sorted(reader.read_prefixes)} if reader else {})},
                      sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def _who(settings: Settings, reader: Profile | None) -> tuple[str, str]:
    if reader is not None:
        return reader.account, reader.user
    return settings.openviking.account, settings.openviking.user


def socket_path(settings: Settings, ident: str) -> Path:
    path = settings.paths.serve / f"{ident}.sock"
    if len(str(path)) > _SUN_PATH_MAX:
        path = Path(tempfile.gettempdir()) / f"muninn-serve-{os.getuid()}" / f"{ident}.sock"
    return path


def private_dir(folder: Path) -> Path:
    """A 0700 folder of ours; one another user could write into is refused, not used."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = folder.stat()
    if info.st_uid != os.getuid():
        raise ServeError(f"{folder} belongs to uid {info.st_uid}, not to you", fix="remove it")
    os.chmod(folder, 0o700)
    return folder


def peer_uid(sock: socket.socket) -> int:
    _pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                          struct.calcsize("3i")))
    return uid


# --- the client: `muninn search` ---

def search(settings: Settings, request: dict[str, Any], note: Callable[[str], None]) -> SearchResult | None:
    """The result from the warm process (started if none runs), or None after `note` said why not."""
    ident = identity(settings)
    path = socket_path(settings, ident)
    reply = _ask(path, {"op": "search", **request})
    if reply is None:
        try:
            started = _start(settings, ident, path)
        except (OSError, ServeError) as exc:   # a folder it cannot make, a process it cannot spawn
            started = str(exc)
        reply = _ask(path, {"op": "search", **request}) if started is None else None
        if reply is None:
            note(f"muninn serve did not answer ({started or 'it closed the connection'}; log: "
                 f"{path.with_suffix('.log')}): searching in this process")
            return None
    if not reply.get("ok"):
        raise ServeError(reply.get("error", "muninn serve failed"), fix=reply.get("fix"),
                         exit_code=reply.get("exit_code"))
    return result_from_dict(reply["result"])


def search_within(settings: Settings, reader: Profile, request: dict[str, Any], budget_s: float,
                  policy: Path | None = None) -> SearchResult | None:
    """The reader's warm process's answer within `budget_s` seconds, else None. None runs: one is started
    in the background for the next call and this one gets None (a search never waits for a model load).
    With search.serve_idle 0 (no warm processes, the owner's choice) none is started: always None."""
    if settings.search.serve_idle <= 0:
        return None
    path = socket_path(settings, identity(settings, reader))
    reply = _ask(path, {"op": "search", **request}, timeout=budget_s)
    if reply is None:
        if not _answering(path):
            with contextlib.suppress(OSError, ServeError):
                _spawn(settings, path, reader, policy)
        return None
    if not reply.get("ok"):
        raise ServeError(reply.get("error", "muninn serve failed"), fix=reply.get("fix"),
                         exit_code=reply.get("exit_code"))
    return result_from_dict(reply["result"])


def _answering(path: Path) -> bool:
    """A process holds this identity's lock (serving, or still warming up)."""
    try:
        fd = os.open(path.with_suffix(".lock"), os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def stop(settings: Settings, reader: Profile | None = None) -> bool:
    """Ask this reader's warm process to exit; False when none was running."""
    return _ask(socket_path(settings, identity(settings, reader)), {"op": "stop"}) is not None


def warm_for_up(settings: Settings, say: Callable[[str], None]) -> None:
    """`muninn up`: the CLI identity's warm process started and warmed now, so the first search after
    `up` does not wait for the reranker to load."""
    if settings.search.serve_idle <= 0:
        return   # searches run in-process: nothing to warm
    ident = identity(settings)
    path = socket_path(settings, ident)
    if _ask(path, {"op": "ping"}) is not None:
        say("search: muninn serve already warm")
        return
    t = time.monotonic()
    why = _start(settings, ident, path)
    say(f"search: muninn serve warm in {time.monotonic() - t:.1f} s (exits after {settings.search.serve_idle:g} s "
        "idle)" if why is None else f"search: muninn serve not started ({why}); the first search loads the reranker")


def _records(settings: Settings) -> list[tuple[Path, dict[str, Any]]]:
    out = []
    for record in sorted(settings.paths.serve.glob("*.json")) if settings.paths.serve.is_dir() else []:
        try:
            out.append((record, json.loads(record.read_text())))
        except (OSError, json.JSONDecodeError):
            continue
    return out


def stop_all(settings: Settings, say: Callable[[str], None]) -> int:
    """`muninn down`: stop every warm process this workspace started, for every reader and config."""
    stopped = 0
    for record, data in _records(settings):
        if _ask(Path(data.get("socket", "")), {"op": "stop"}) is not None:
            say(f"search: stopping muninn serve pid {data.get('pid')} ({data.get('who')})")
            stopped += 1
        with contextlib.suppress(FileNotFoundError):
            record.unlink()
    return stopped


def _replace_older(settings: Settings, ident: str, who: str) -> None:
    """Stop this reader's processes for another identity (muninn.yaml edited, key rotated, muninn upgraded):
    no search reaches them any more, and each holds a model in memory until it idles out."""
    for record, data in _records(settings):
        if data.get("who") == who and record.stem != ident:
            _ask(Path(data.get("socket", "")), {"op": "stop"})
            with contextlib.suppress(FileNotFoundError):
                record.unlink()


def _ask(path: Path, message: dict[str, Any], timeout: float = REPLY_TIMEOUT_S) -> dict[str, Any] | None:
    if not path.exists():
        return None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
            if peer_uid(sock) != os.getuid():
                raise ServeError(f"{path} is served by another user", fix=f"remove {path}")
            sock.sendall(json.dumps(message).encode() + b"\n")
            data = sock.makefile("rb").readline(64 * MAX_REQUEST)
            return json.loads(data) if data else None
        except (ConnectionError, FileNotFoundError, TimeoutError, json.JSONDecodeError):
            return None   # not listening, killed mid-answer: the caller starts one or searches in-process


def _spawn(settings: Settings, path: Path, reader: Profile | None = None,
           policy: Path | None = None) -> subprocess.Popen:
    """Start `muninn serve` for this identity in its own session, its output in the socket's log."""
    private_dir(path.parent)
    log = path.with_suffix(".log")
    args = [sys.executable, "-m", "muninn"]
    if settings.source_file:
        args += ["--config", str(settings.source_file)]
    args += ["serve", "--identity", path.stem]
    if reader is not None:   # for the hook, which searches without the cross-encoder: no model to load first
        args += ["--profile", reader.name, *(["--policy", str(policy)] if policy else []), "--no-warm-up"]
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "ab") as out:
        return subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True)


def _start(settings: Settings, ident: str, path: Path) -> str | None:
    """Start `muninn serve` and wait until it listens; None when it does, else why not."""
    child = _spawn(settings, path)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if _ask(path, {"op": "ping"}) is not None:
            return None
        # Exit 0: another `muninn serve` for this identity holds the lock and is still warming up.
        if child.poll() not in (None, 0):
            return f"it exited with code {child.returncode}"
        time.sleep(0.05)
    return f"it did not listen within {START_TIMEOUT_S:.0f} s"


def result_from_dict(data: dict[str, Any]) -> SearchResult:
    fields = dict(data)
    fields["hits"] = [Hit(**h) for h in fields["hits"]]
    return SearchResult(**fields)


# --- the server ---

class Warm:
    """One Searcher kept between requests; rebuilt when the keyword index file is replaced."""

    def __init__(self, settings: Settings, reader: Profile | None = None) -> None:
        self.settings = settings
        self.reader = reader
        self.lock = threading.Lock()
        self.last = time.monotonic()
        self._searcher: Any = None
        self._index_id: tuple[int, int] | None = None

    def searcher(self) -> Any:

        index_id = _file_id(self._index())
        if self._searcher is not None and index_id != self._index_id:
            self._searcher.close()   # `search-index --rebuild` moved the file aside: open the new one
            self._searcher = None
        if self._searcher is None:
            self._searcher, self._index_id = self._build(), index_id
        return self._searcher

    def _index(self) -> Path:
        if self.reader is None:
            return self.settings.paths.search_index()
        from muninn.plugins.search import reader_index

        return reader_index.index_path(self.settings, self.reader)

    def _build(self) -> Any:
        """The configured identity's searcher, or the reader's: its own key, keyword index and areas."""
        from muninn.plugins.search.pipeline import Searcher

        reader = self.reader
        if reader is None:
            return Searcher(self.settings)
        from muninn.core.client import OpenViking
        from muninn.plugins.search import reader_index

        searcher = Searcher(self.settings, client=OpenViking.user(self.settings, reader.account, reader.user),
                            index=reader_index.index_path(self.settings, reader),
                            index_fix=reader_index.fix_command(reader), readable=lambda uri: reader.may("read", uri))
        searcher.owns_client = True
        return searcher

    def warm_up(self) -> None:
        self.searcher().warm_up()

    def answer(self, message: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.last = time.monotonic()
            try:
                result = self.searcher().search(
                    message["query"], k=message.get("k"), target=message.get("target"), since=message.get("since"),
                    briefing=bool(message.get("briefing")), tokens=message.get("tokens"),
                    min_score=message.get("min_score"), **(message.get("switches") or {}))
            except MuninnError as err:   # the edge: the error goes back whole, the client exits with its code
                return {"ok": False, "error": err.message, "fix": err.fix, "exit_code": int(err.exit_code)}
            finally:
                self.last = time.monotonic()
            return {"ok": True, "result": result.to_dict()}

    def close(self) -> None:
        if self._searcher is not None:
            self._searcher.close()


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    return info.st_dev, info.st_ino


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True
    warm: Warm


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        if peer_uid(self.connection) != os.getuid():
            return   # the 0600 socket already keeps other users out; this holds if its mode is changed
        line = self.rfile.readline(MAX_REQUEST)
        if not line:
            return
        message = json.loads(line)
        op = message.get("op")
        if op == "ping":
            reply: dict[str, Any] = {"ok": True, "pid": os.getpid()}
        elif op == "stop":
            reply = {"ok": True}
            threading.Thread(target=self.server.shutdown, daemon=True).start()
        elif op == "search":
            reply = self.server.warm.answer(message)
        else:
            reply = {"ok": False, "error": f"unknown op {op!r}", "exit_code": int(ExitCode.BAD_INPUT)}
        self.wfile.write(json.dumps(reply, default=str).encode() + b"\n")


def serve(settings: Settings, idle: float, say: Callable[[str], None], reader: Profile | None = None,
          warm_up: bool = True) -> int:
    """Listen until `idle` seconds pass without a search (0: until stopped). 0 also when another
    process already serves this identity. `reader`: search as this policy reader. `warm_up`: load the
    reranker before listening (off for the hook's process, whose searches skip it)."""
    ident = identity(settings, reader)
    path = socket_path(settings, ident)
    private_dir(path.parent)
    lock_fd = os.open(path.with_suffix(".lock"), os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(lock_fd, "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"muninn serve already runs for this reader on {path}")
            return 0
        warm = Warm(settings, reader)
        if warm_up:
            warm.warm_up()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()   # left by a process that was killed; the lock says none runs now
        old_mask = os.umask(0o177)
        try:
            server = _Server(str(path), _Handler)
        finally:
            os.umask(old_mask)
        os.chmod(path, 0o600)
        server.warm = warm
        who = "/".join(_who(settings, reader))
        _replace_older(settings, ident, who)
        record = private_dir(settings.paths.serve) / f"{ident}.json"
        atomic.write_text(record, json.dumps({"socket": str(path), "who": who, "pid": os.getpid()}), 0o600)
        if idle > 0:
            threading.Thread(target=_stop_when_idle, args=(server, warm, idle), daemon=True).start()
        say(f"muninn serve {os.getpid()} on {path} (exits after {idle:g} s idle)" if idle
            else f"muninn serve {os.getpid()} on {path}")
        try:
            server.serve_forever(poll_interval=0.2)
        finally:
            server.server_close()
            for done in (path, record):
                with contextlib.suppress(FileNotFoundError):
                    done.unlink()
            warm.close()
    return 0


def _stop_when_idle(server: _Server, warm: Warm, idle: float) -> None:
    while True:
        time.sleep(min(idle / 4, 5.0))
        if not warm.lock.locked() and time.monotonic() - warm.last > idle:
            server.shutdown()
            return
