"""Whole files or nothing: every file muninn writes goes to a temp file in the same folder, is
flushed to disk, and only then renamed over the target. A full disk, a read-only folder or a kill
leaves the previous version (or no file), never a 0-byte or half-written one that a later step
(sync, search) would trust.

An OSError while writing becomes WriteFailed: one sentence naming the file and the cause, exit 12.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from muninn.core.errors import ExitCode, MuninnError

_CAUSES = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "the folder is on a read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
}


class WriteFailed(MuninnError):
    """A file could not be written; nothing half-written was left in its place."""

    exit_code = ExitCode.WRITE_FAILED


def _failed(path: Path, exc: OSError) -> WriteFailed:
    cause = _CAUSES.get(exc.errno or 0, exc.strerror or type(exc).__name__)
    return WriteFailed(f"could not write {path}: {cause}; nothing half-written was kept",
                       fix="free space or choose a writable folder, then rerun")


@contextmanager
def translated(path: Path) -> Iterator[None]:
    """OSError from file operations on `path` (mkdir, unlink, rename) as WriteFailed."""
    try:
        yield
    except OSError as exc:
        raise _failed(path, exc) from None


def _default_mode() -> int:
    # What a plain open() would create: mkstemp makes 0600, which is right only under the home.
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_bytes(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write `data` to `path` atomically (temp file, fsync, rename). `mode` defaults to what the
    umask gives a new file; pass 0o600 for files under the home."""
    path = Path(path)
    with translated(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, _default_mode() if mode is None else mode)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _fsync_dir(path.parent)


def write_text(path: Path, text: str, mode: int | None = None) -> None:
    write_bytes(path, text.encode("utf-8"), mode)


def _fsync_dir(folder: Path) -> None:
    # The rename is durable only once the folder's entry is on disk too.
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
