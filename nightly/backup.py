"""What cannot be rebuilt from sources, in one dated tar: every reader's own area (`remember_to`,
read from the server with that reader's key, since with ACLs on it may be the only one that can),
the vault store, policy.yaml, the sync manifests, and the server's account list. The last
`nightly.keep_backups` tars are kept in `<home>/backups/`.

`restore` puts one area back from a tar: its files are written under the URI given, with the key
of the reader the area belonged to (falling back to the CLI's own), then read back and counted.
"""

from __future__ import annotations

import io
import json
import sqlite3
import tarfile
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from muninn.core import credentials, policy
from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.core.errors import AuthError, ConfigError, MuninnError, NotFound, ServerDown
from muninn.nightly import server_scan

AREAS = "areas"   # areas/<n>/<relative path>, described by areas.json


@dataclass
class BackupReport:
    path: Path
    areas: dict[str, int] = field(default_factory=dict)     # area URI -> files
    included: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "areas": self.areas, "included": self.included, "skipped": self.skipped}


def folder(settings: Settings) -> Path:
    return settings.paths.backups


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o600
    info.mtime = int(datetime.now(UTC).timestamp())
    tar.addfile(info, io.BytesIO(data))


def _sqlite_copy(path: Path) -> bytes:
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


def _remember_areas(settings: Settings) -> list[tuple[str, str, server_scan.Identity]]:
    """(reader, area URI, identity to read it with) for every reader that has a `remember_to`."""
    try:
        pol = policy.load_for(settings)
    except ConfigError:
        if policy.path_for(settings).exists():
            raise
        return []
    idents = {i.label: i for i in server_scan.identities(settings)}
    return [(name, prof.remember_to, idents[name]) for name, prof in pol.profiles.items() if prof.remember_to]


def create(settings: Settings) -> BackupReport:
    out = folder(settings)
    out.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = out / f"muninn-backup-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S.%fZ')}.tar.gz"
    report = BackupReport(path)
    tmp = path.with_name(f".{path.name}.tmp")
    with tarfile.open(tmp, "w:gz") as tar:
        described = []
        done: set[tuple[str, str]] = set()
        for reader, area, ident in _remember_areas(settings):
            if (ident.account, area) in done:
                continue
            done.add((ident.account, area))
            client = server_scan.connect(settings, ident)
            if client is None:
                report.skipped.append(f"{area}: no key for {reader}")
                continue
            n = len(described)
            files: list[str] = []
            with client:
                try:
                    for entry in client.walk(area):
                        rel = entry.uri[len(area) + 1:]
                        _add(tar, f"{AREAS}/{n}/{rel}", client.read(entry.uri).encode())
                        files.append(rel)
                except NotFound:
                    pass
                except AuthError as exc:
                    report.skipped.append(f"{area}: {exc.message}")
                    continue
            described.append({"area": area, "reader": reader, "account": ident.account, "files": files})
            report.areas[area] = len(files)
        _add(tar, "areas.json", json.dumps(described, indent=1).encode())
        report.included.append("areas")
        store = settings.paths.vault_store
        if store.exists():
            _add(tar, "vault/vault.sqlite", _sqlite_copy(store))
            report.included.append("vault store")
        for extra in (settings.paths.retired_hashes, policy.path_for(settings)):
            if extra.exists():
                _add(tar, f"config/{extra.name}", extra.read_bytes())
                report.included.append(extra.name)
        manifests = sorted(settings.paths.sync_manifests.glob("*.json"))
        for m in manifests:
            _add(tar, f"sync/{m.name}", m.read_bytes())
        report.included.append(f"{len(manifests)} sync manifest(s)")
        _accounts(settings, tar, report)
    tmp.replace(path)
    path.chmod(0o600)
    for old in sorted(out.glob("muninn-backup-*.tar.gz"))[:-settings.nightly.keep_backups]:
        old.unlink(missing_ok=True)
    return report


def _accounts(settings: Settings, tar: tarfile.TarFile, report: BackupReport) -> None:
    if credentials.for_server(settings).get(credentials.root_key_name()) is None:
        report.skipped.append("account list: no root key in the keyring")
        return
    try:
        with OpenViking.root(settings) as root:
            accounts = [{**a, "users": root.list_users(a["account_id"])} for a in root.list_accounts()
                        if a.get("account_id")]
    except ServerDown as exc:
        # The local parts (vault, policy, manifests) are still worth keeping: say what is missing.
        report.skipped.append(f"account list: {exc.message}")
        return
    _add(tar, "server/accounts.json", json.dumps(accounts, indent=1, default=str).encode())
    report.included.append(f"account list ({len(accounts)})")


def restore(settings: Settings, tar_path: Path, to: str) -> dict[str, Any]:
    """Write the backed-up area whose URI is `to` back to the server; returns counts."""
    to = to.rstrip("/")
    with tarfile.open(tar_path, "r:gz") as tar:
        described = json.loads(tar.extractfile("areas.json").read())  # type: ignore[union-attr]
        matches = [(n, d) for n, d in enumerate(described) if d["area"] == to]
        if not matches:
            known = ", ".join(d["area"] for d in described) or "none"
            raise MuninnError(f"{tar_path} holds no area {to}", fix=f"areas in this backup: {known}")
        n, area = matches[0]
        files = {f"{to}/{rel}": tar.extractfile(f"{AREAS}/{n}/{rel}").read().decode()  # type: ignore[union-attr]
                 for rel in area["files"]}
    idents = {i.label: i for i in server_scan.identities(settings)}
    ident = idents.get(area["reader"]) or idents["cli"]
    client = server_scan.connect(settings, ident) or OpenViking.user(settings)
    with client:
        if files:
            client.batch_write(to, files, wait=True)
        back = {e.uri for e in client.walk(to)} if files else set()
    missing = sorted(set(files) - back)
    if missing:
        raise MuninnError(f"restore of {to}: {len(missing)} of {len(files)} file(s) not there after writing",
                          fix="check the server log (`muninn status`) and run the restore again")
    return {"area": to, "files": len(files), "as": ident.label}


def backup_job(ctx: Any) -> Any:
    from muninn.nightly.jobs import JobResult

    report = create(ctx.settings)
    detail = f"{report.path.name}: {sum(report.areas.values())} file(s) in {len(report.areas)} area(s), " \
             f"{', '.join(report.included[1:])}"
    if report.skipped:
        return JobResult("backup", True, f"{detail}; skipped: {'; '.join(report.skipped)}", report.to_json(),
                         status="warn")
    return JobResult("backup", True, detail, report.to_json())
