"""The restore drill: the latest backup (or one named) opened with the key in the keyring, every member
written into a scratch folder, read back from disk and checked against the hash the backup's own index
holds; then the scratch folder goes. A backup that does not open, a member missing, changed or cut
off, fails loudly: the drill is what says a backup will restore before the day it must.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from muninn.core.config import Settings
from muninn.core.errors import MuninnError
from muninn.nightly.backup import archive as backup_archive
from muninn.nightly.backup import make as backup
from muninn.nightly.backup import restore as backup_restore


class DrillFailed(MuninnError):
    """The backup opened, but some of it is not what its index says."""


@dataclass
class DrillReport:
    path: Path
    members: int = 0
    server_files: int = 0
    local_files: int = 0
    bytes: int = 0
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "members": self.members, "server_files": self.server_files,
                "local_files": self.local_files, "bytes": self.bytes, "seconds": round(self.seconds, 3),
                "problems": self.problems}


def latest(settings: Settings) -> Path:
    found = backup.listing(settings)
    if not found:
        raise MuninnError(f"no backup in {backup.folder(settings)} to verify", fix="run `muninn backup create`")
    return found[-1]


def drill(settings: Settings, path: Path | None = None, allow_unsealed: bool = False) -> DrillReport:
    """Raises BackupUnreadable (it does not open), BackupRefused (it is not sealed) or DrillFailed (it
    opens, and differs from its index)."""
    started = time.monotonic()
    path = path or latest(settings)
    report = DrillReport(path, bytes=path.stat().st_size)
    archive = backup_restore.open_archive(settings, path, allow_unsealed)
    report.problems = archive.problems()
    hashes: dict[str, str] = archive.index.get("members", {})
    scratch_root = backup.folder(settings)
    scratch_root.mkdir(parents=True, exist_ok=True, mode=0o700)
    with tempfile.TemporaryDirectory(prefix=".drill-", dir=scratch_root) as scratch:
        for name, data in archive.members.items():
            out = Path(scratch) / name
            if Path(scratch) not in out.resolve().parents:
                report.problems.append(f"{name}: a member name that leaves the scratch folder")
                continue
            try:
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(data)
            except OSError as exc:      # `x` and `x/y` both members: one cannot be written beside the other
                report.problems.append(f"{name}: cannot be written out ({exc.strerror or type(exc).__name__})")
                continue
            if name in hashes and backup_archive.sha(out.read_bytes()) != hashes[name]:
                report.problems.append(f"{name}: differs from its hash once written to disk")
    report.members = len(archive.members)
    report.server_files, report.local_files = len(archive.server_files), len(archive.local_files)
    report.seconds = time.monotonic() - started
    return report


def raise_for(report: DrillReport) -> None:
    if report.problems:
        more = f" (+{len(report.problems) - 5} more)" if len(report.problems) > 5 else ""
        raise DrillFailed(f"{report.path} failed the restore drill: {'; '.join(report.problems[:5])}{more}",
                          fix="do not rely on this backup: run `muninn backup create` and verify again")
