"""One nightly run at a time. The lock is an `flock` on `<home>/nightly/lock`, which the kernel
releases when its holder dies, so a lock left by a killed run (a dead PID in the file) is simply
taken over; the PID inside is only there to name the holder in the refusal."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from muninn.core.errors import ExitCode, MuninnError


class Busy(MuninnError):
    exit_code = ExitCode.BUSY


@contextmanager
def held(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            raise Busy(f"another `muninn nightly` is running (PID {holder}, lock {path})",
                       fix="wait for it to finish; this run did nothing") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
