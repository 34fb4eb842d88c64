"""What cannot be rebuilt, in one dated file in `<home>/backups/`:
- every file on the server that no export wrote, or whose bytes differ from what the sync manifest
  says muninn wrote (server.py: the agents' areas, readers' direct writes into shared areas,
  readers' edits of exported files), read with every identity that has a key;
- every local part registered through `register_backup_parts` (parts.py: the vault store,
  policy.yaml, the sync manifests, retired-value hashes, the allowlist, approved skills, the
  observation logs);
- the server's account list (with the root key).
Keys are never in a backup. The format (an index of hashes included) is archive.py's.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from muninn.core import credentials
from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.core.errors import ServerDown
from muninn.nightly.backup import archive as backup_archive
from muninn.nightly.backup import crypt as backup_crypt
from muninn.nightly.backup import parts as backup_parts
from muninn.nightly.backup import server as backup_server
from muninn.nightly.backup.server import area_of, policy_areas

PATTERN = "muninn-backup-*"          # .mbk sealed; .tar.gz made before sealing


@dataclass
class BackupReport:
    path: Path
    areas: dict[str, int] = field(default_factory=dict)     # area (or top folder) URI -> files held
    included: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    rebuildable: int = 0                                     # server files left out: as a sync wrote them
    edited: int = 0                                          # of those held: exported files a reader changed
    size: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "areas": self.areas, "included": self.included, "skipped": self.skipped,
                "rebuildable": self.rebuildable, "edited": self.edited, "bytes": self.size}


def folder(settings: Settings) -> Path:
    return settings.paths.backups


def gather(settings: Settings, report: BackupReport) -> tuple[dict[str, bytes], dict[str, Any]]:
    members: dict[str, bytes] = {}
    server_files: list[dict[str, Any]] = []
    collected = backup_server.collect(settings)
    areas = policy_areas(settings)
    for f in collected.files:
        name = backup_archive.server_member(f.account, f.uri)
        members[name] = f.data
        server_files.append({"member": name, "uri": f.uri, "account": f.account, "read_as": f.read_as, "why": f.why})
    report.areas = dict(sorted(Counter(area_of(f.uri, areas) for f in collected.files).items()))
    report.rebuildable = collected.rebuildable
    report.edited = sum(f.why == "edited" for f in collected.files)
    report.skipped += collected.unreadable
    report.included.append(f"server files ({len(collected.files)})")
    local_files: list[dict[str, Any]] = []
    for part in backup_parts.parts().values():
        found = list(part.files(settings))
        for rel, path in found:
            name = backup_archive.local_member(part.name, rel)
            members[name] = part.read(path)
            local_files.append({"member": name, "part": part.name, "rel": rel})
        if found:
            report.included.append(part.name)
    accounts = _accounts(settings, report)
    if accounts is not None:
        members["server/accounts.json"] = json.dumps(accounts, indent=1, default=str).encode()
    index = {"created": datetime.now(UTC).isoformat(timespec="seconds"), "server": settings.server.base_url,
             "server_files": server_files, "local_files": local_files, "skipped": report.skipped}
    return members, index


def create(settings: Settings) -> BackupReport:
    out = folder(settings)
    out.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = out / f"muninn-backup-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S.%fZ')}.mbk"
    report = BackupReport(path)
    members, index = gather(settings, report)
    data = backup_crypt.seal(settings, backup_archive.pack(members, index), path.name)
    backup_archive.write_private(path, data)
    report.size = len(data)
    for old in expired(listing(settings), settings.nightly.keep_backups, settings.nightly.keep_weekly_backups):
        old.unlink(missing_ok=True)
    return report


def listing(settings: Settings) -> list[Path]:
    """Every backup in the folder, oldest first (the names sort by time)."""
    out = folder(settings)
    return sorted(p for p in out.glob(PATTERN) if p.suffix in (".mbk", ".gz")) if out.is_dir() else []


def stamp(path: Path) -> datetime:
    return datetime.strptime(path.name.split("-", 2)[2].split(".", 1)[0], "%Y%m%dT%H%M%S").replace(tzinfo=UTC)


def expired(paths: list[Path], daily: int, weekly: int) -> list[Path]:
    """What retention removes, as restic's --keep-daily/--keep-weekly count: each rule on its own over
    every backup, and a backup stays when any rule keeps it. The newest `daily` stay, the newest of each
    of the last `daily` days (so hourly off-host pushes do not crowd out the nights), and the newest of
    each of the last `weekly` weeks that have one."""
    ordered = sorted(paths)
    keep = set(ordered[-daily:]) if daily else set()
    days: dict[object, Path] = {}
    weeks: dict[tuple[int, int], Path] = {}
    for p in ordered:                                 # later ones overwrite: the newest of its day or week
        days[stamp(p).date()] = p
        weeks[stamp(p).isocalendar()[:2]] = p
    keep |= set(sorted(days.values())[-daily:]) if daily else set()
    keep |= set(sorted(weeks.values())[-weekly:]) if weekly else set()
    return [p for p in ordered if p not in keep]


def _accounts(settings: Settings, report: BackupReport) -> list[dict[str, Any]] | None:
    if credentials.for_server(settings).get(credentials.root_key_name()) is None:
        report.skipped.append("account list: no root key in the keyring")
        return None
    try:
        with OpenViking.root(settings) as root:
            accounts = [{**a, "users": root.list_users(a["account_id"])} for a in root.list_accounts()
                        if a.get("account_id")]
    except ServerDown as exc:
        # The local parts (vault, policy, manifests) are still worth keeping: say what is missing.
        report.skipped.append(f"account list: {exc.message}")
        return None
    report.included.append(f"account list ({len(accounts)})")
    return accounts


def restore(settings: Settings, path: Path, to: str) -> dict[str, Any]:
    """One area back onto the server (kept for callers of the earlier API): backup_restore.restore."""
    from muninn.nightly.backup import restore as backup_restore

    report = backup_restore.restore(settings, path, area=to)
    backup_restore.raise_for(report)
    return report.to_json()
