"""Local state a backup holds because nothing rebuilds it, one `LocalPart` each, gathered through the
`register_backup_parts` hook: a part muninn gains later (or an outside plugin) registers its own file
and the backup, the restore and the drill pick it up with no change here.

A part is a file or a folder of files (with a glob). A SQLite part is copied through SQLite's backup
API, never byte by byte while another process may be writing it. Keys are never a part: reader keys
are minted again by `policy apply`, and a key given to another host travels by `muninn key export`.
"""

from __future__ import annotations

import fnmatch
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from muninn.core import policy, registry
from muninn.core.config import Settings
from muninn.guards.known import retired


@dataclass(frozen=True)
class LocalPart:
    name: str                                   # a stable id: it names the folder inside the backup
    locate: Callable[[Settings], Path]          # the file, or the folder when `pattern` is set
    pattern: str | None = None                  # glob inside the folder
    sqlite: bool = False
    what: str = ""                              # for the report: why it cannot be rebuilt
    # (bytes here, bytes in the backup) -> what to write, for a part that is joined rather than replaced;
    # None from it: they cannot be joined (the restore keeps this host's and says so).
    merge: Callable[[bytes, bytes], bytes | None] | None = None

    def files(self, settings: Settings) -> Iterator[tuple[str, Path]]:
        """(path inside the part, file) for what exists now."""
        where = self.locate(settings)
        if self.pattern is None:
            if where.is_file():
                yield where.name, where
            return
        for f in sorted(where.glob(self.pattern)) if where.is_dir() else []:
            if f.is_file():
                yield f.relative_to(where).as_posix(), f

    def target(self, settings: Settings, rel: str) -> Path:
        """Where a restored file of this part goes on this host."""
        where = self.locate(settings)
        return where / rel if self.pattern is not None else where

    def confined_target(self, settings: Settings, rel: str) -> Path:
        """`target`, or ValueError when `rel` is not a name this part's files can have: inside the folder
        and matching the pattern (a one-file part goes to its own file whatever `rel` says), resolved
        there, and never through a symlink."""
        if why := rel_problem(rel, self.pattern):
            raise ValueError(why)
        if self.pattern is None:
            return self.target(settings, rel)        # this host's config names the file, not the archive
        if not fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], self.pattern.rsplit("/")[-1]):
            raise ValueError(f"does not match the part's pattern {self.pattern!r}")
        return _inside(self.target(settings, rel), self.locate(settings))

    def read(self, path: Path) -> bytes:
        return sqlite_copy(path) if self.sqlite else path.read_bytes()


def rel_problem(rel: str, pattern: str | None) -> str | None:
    """Why `rel` cannot name a file of a part (None: it can)."""
    if not rel or rel.startswith("/") or "\\" in rel or any(x in ("", ".", "..") for x in rel.split("/")):
        return "a path that is absolute, empty or climbs out"
    if pattern is not None and "/" not in pattern and "/" in rel:
        return "a path in a sub-folder its part does not have"
    return None


def _inside(target: Path, folder: Path) -> Path:
    """`target` when it resolves inside `folder`, and neither it nor `folder` is a symlink; else ValueError."""
    for link in (target, folder):
        if link.is_symlink():
            raise ValueError(f"{link} is a symlink: a restore never writes through one")
    base = folder.resolve()
    if base != target.resolve().parent and base not in target.resolve().parents:
        raise ValueError(f"resolves outside {folder}")
    return target


def sqlite_copy(path: Path) -> bytes:
    """A consistent copy of a live SQLite file (the backup API, not a byte copy mid-write)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "copy.sqlite"
        src, dst = sqlite3.connect(path), sqlite3.connect(out)
        try:
            src.backup(dst)
        finally:
            src.close()
            dst.close()
        return out.read_bytes()


def _observation_logs(settings: Settings) -> Path:
    # Not a folder of its own: the part's files are found by `_ObservationLogs` below.
    return settings.paths.home


class _ObservationLogs(LocalPart):
    """Every `observations` source's log: the agent's record of its tool calls exists nowhere else.
    Stored by the log's position in `sources:`, restored to the path muninn.yaml names for it now."""

    def _logs(self, settings: Settings) -> list[Path]:
        return [settings.paths.resolve(s.path) for s in settings.sources if s.kind == "observations"]

    def files(self, settings: Settings) -> Iterator[tuple[str, Path]]:
        for n, log in enumerate(self._logs(settings)):
            if log.is_file():
                yield f"{n}/{log.name}", log

    def target(self, settings: Settings, rel: str) -> Path:
        n = int(rel.split("/", 1)[0])
        logs = self._logs(settings)
        return logs[n] if n < len(logs) else settings.paths.restored / "observations" / rel

    def confined_target(self, settings: Settings, rel: str) -> Path:
        """The log at position n in `sources:` (its own name), or a file under <home>/restored/observations/."""
        head, _, name = rel.partition("/")
        if not head.isdigit() or rel_problem(name, None) or "/" in name:
            raise ValueError("not <position>/<log name>")
        logs = self._logs(settings)
        n = int(head)
        if n < len(logs):
            if name != logs[n].name:
                raise ValueError(f"names {name!r}, but observation log {n} is {logs[n].name!r}")
            return _inside(logs[n], logs[n].parent)
        return _inside(self.target(settings, rel), settings.paths.restored / "observations")


BUILTIN = (
    LocalPart("vault", lambda s: s.paths.vault_store, sqlite=True, what="secret values, sealed with the vault key"),
    LocalPart("retired-hashes", lambda s: s.paths.retired_hashes, what="salted hashes of retired values",
              merge=retired.merged),
    LocalPart("policy", lambda s: policy.path_for(s), what="readers, areas and levels"),
    LocalPart("sync-manifests", lambda s: s.paths.sync_manifests, pattern="*.json",
              what="what muninn wrote to each area: tells readers' files from exported ones"),
    LocalPart("redact-allowlist", lambda s: s.paths.redact_allowlist, what="values the owner allowed"),
    LocalPart("approved-skills", lambda s: s.paths.approved_skills, what="skills the owner approved"),
    _ObservationLogs("observation-logs", _observation_logs, what="the agent's tool-call logs"),
)


def parts() -> dict[str, LocalPart]:
    return {p.name: p for p in registry.backup_parts()}
