"""Run a child with secrets injected and every byte of its output masked before it reaches us.

Used by `secret exec`, `access exec` and the verify sweep (through `injection.run`). The child's
stdout and stderr are pipes; one thread per pipe reads whatever arrives (`os.read`, no line
buffering, so a value printed without a newline is still masked at EOF) and writes the masked
bytes on.

Every way out other than those pipes is closed, because output that goes around them is not masked:
- the child starts a new session, so it has no controlling terminal: `/dev/tty` does not open (ENXIO),
  `exec 3<>/dev/tty` fails, and no terminal signal reaches it except the ones we pass on;
- its stdin is /dev/null (or the pipe carrying `--stdin`'s value), never our terminal and never the
  MCP server's JSON-RPC stream: `>&0`, `/dev/stdin` and `/proc/self/fd/0` lead nowhere;
- no other descriptor of ours is inherited (`close_fds`);
- this process is made non-dumpable, so another process of the same user cannot reopen our
  terminal through `/proc/<our pid>/fd/1` (nor read the decrypted values from `/proc/<pid>/mem`).
- When our stdout and stderr are the same place (one file, pipe or terminal: same device and
  inode), the child gets one pipe for both and it is masked as one stream; when they are two places,
  both pipes feed one masker in the order their bytes arrive (`JointMasker`), each character still
  going to its own place. Either way a value written half to fd 1 and half to fd 2 is whole when matched.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import BinaryIO

from muninn.core.errors import ExitCode, MuninnError
from muninn.guards.redact.mask import JointMasker, StreamMasker
from muninn.guards.redact.redactor import Redactor

CHUNK = 65536


class CommandNotFound(MuninnError):
    exit_code = ExitCode.COMMAND_NOT_FOUND


@dataclass
class RunResult:
    exit_code: int
    timed_out: bool = False
    hits: list[str] = field(default_factory=list)


def _pump(src: BinaryIO, feed: Callable[[bytes], None], finish: Callable[[], None]) -> None:
    """Read the child's pipe into `feed` until EOF, then `finish`. A BrokenPipeError (our reader went
    away, `... | head -1`) stops the reading: closing the child's pipe hands it the same SIGPIPE, instead
    of leaving it blocked on a full pipe nobody reads."""
    fd = src.fileno()
    try:
        while data := os.read(fd, CHUNK):
            feed(data)
    except BrokenPipeError:
        pass
    finally:
        src.close()
        with contextlib.suppress(BrokenPipeError):
            finish()        # always: a joint masker releases the other stream's tail only once both end


def _to(dst: BinaryIO, masker: StreamMasker) -> tuple[Callable[[bytes], None], Callable[[], None]]:
    """One stream to one place: (feed, finish) writing what `masker` releases."""
    def write(out: bytes) -> None:
        dst.write(out)
        dst.flush()

    return (lambda data: write(masker.feed(data))), (lambda: write(masker.flush()))


def same_place(a: BinaryIO, b: BinaryIO) -> bool:
    """Do two outputs end up in one place (the same object, or the same file, pipe or terminal)?"""
    if a is b:
        return True
    try:
        sa, sb = os.fstat(a.fileno()), os.fstat(b.fileno())
    except (OSError, ValueError, AttributeError):  # io.BytesIO and friends have no descriptor
        return False
    if stat.S_ISCHR(sa.st_mode) and stat.S_ISCHR(sb.st_mode):
        return sa.st_rdev == sb.st_rdev  # one terminal, however many times it was opened
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


_PR_SET_DUMPABLE = 4


def _not_dumpable() -> None:
    """prctl(PR_SET_DUMPABLE, 0): /proc/<pid>/fd, environ and mem of this process become root's only.
    Linux only; elsewhere nothing to do (and nothing claimed in the README)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


@contextlib.contextmanager
def _forward_signals(pgid: int) -> Iterator[None]:
    """The child has its own session, so the terminal's SIGHUP and a SIGTERM to us would not reach it:
    pass them on to its process group (only the main thread may set handlers; workers skip this)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run_masked(
    command: Sequence[str] | str,
    *,
    redactor: Redactor,
    stdout: BinaryIO,
    stderr: BinaryIO,
    env: Mapping[str, str] | None = None,
    stdin_data: bytes | None = None,
    timeout: float | None = None,
) -> RunResult:
    """Run `command` (argv, or one string for bash -c), masking both streams. Keeps the exit code.

    The child gets its own session (and so its own process group): a timeout kills the whole group,
    so a shell's children die with it.
    """
    argv = ["bash", "-c", command] if isinstance(command, str) else list(command)
    merged = same_place(stdout, stderr)
    _not_dumpable()
    try:
        proc = subprocess.Popen(
            argv, env=dict(env) if env is not None else None,
            stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merged else subprocess.PIPE,
            start_new_session=True, close_fds=True)
    except FileNotFoundError:
        raise CommandNotFound(f"command not found: {argv[0]}", fix="check the name and PATH") from None
    except PermissionError:
        raise CommandNotFound(f"command is not executable: {argv[0]}", fix="check its mode") from None
    if merged:
        masker = StreamMasker(redactor)
        pumps = [threading.Thread(target=_pump, args=(proc.stdout, *_to(stdout, masker)), daemon=True)]
        found = masker.hits
    else:
        # Two places: one masker over both, so a value split between stdout and stderr is still whole.
        joint = JointMasker(redactor, [stdout, stderr])
        pumps = [threading.Thread(target=_pump, args=(src, partial(joint.feed, i), partial(joint.finish, i)),
                                  daemon=True) for i, src in enumerate((proc.stdout, proc.stderr))]
        found = joint.hits
    for pump in pumps:
        pump.start()
    if stdin_data is not None:
        assert proc.stdin is not None
        try:
            proc.stdin.write(stdin_data)
            proc.stdin.close()
        except BrokenPipeError:
            pass  # the child did not read its stdin; its exit code tells the story
    timed_out = False
    with _forward_signals(proc.pid):
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            code = proc.wait()
        except KeyboardInterrupt:
            # Ctrl-C reaches only our process group (the terminal's foreground): pass it on to the child's.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGINT)
            code = proc.wait()
    for pump in pumps:
        pump.join()
    if code < 0:
        code = 128 - code  # killed by a signal: report it the way a shell does
    return RunResult(code, timed_out, list(found))
