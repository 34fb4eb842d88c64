"""The one owner of the backup file's format.

A backup is a gzipped tar. Its last member, `muninn-backup.json`, is the index: the format, when and
from which server it was made, the SHA-256 of every other member, and what each member is (a server
file with its account, URI and the identity that read it; a local part's file). The drill checks every
member against these hashes, so a flipped byte or a cut-off file is found without a server.

Backups of format 1 (before the index: `areas.json` + `areas/<n>/<path>`) are read as the same records,
without hashes, so they still restore.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from muninn.core.errors import ExitCode, MuninnError

INDEX = "muninn-backup.json"
FORMAT = 2


class BackupUnreadable(MuninnError):
    """The file is not a backup muninn can read: cut off, damaged, or sealed with another key."""


class BackupRefused(MuninnError):
    """The backup is not one muninn will put back: not sealed, or a file in it names a place outside
    what the backup was taken from. Nothing was written."""

    exit_code = ExitCode.BACKUP_REFUSED


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def server_member(account: str, uri: str) -> str:
    return f"server/{account}/{uri.removeprefix('viking://')}"


def local_member(part: str, rel: str) -> str:
    return f"local/{part}/{rel}"


def pack(members: dict[str, bytes], index: dict[str, Any]) -> bytes:
    """The tar.gz bytes: every member, then the index naming each one's hash."""
    now = int(datetime.now(UTC).timestamp())
    full = {**index, "format": FORMAT, "members": {n: sha(d) for n, d in members.items()}}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in [*members.items(), (INDEX, json.dumps(full, indent=1, sort_keys=True).encode())]:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o600, now
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@dataclass
class Archive:
    """An opened backup: its index and its members, read whole (a backup is small beside memory)."""

    source: str
    index: dict[str, Any]
    members: dict[str, bytes]
    sealed: bool = True         # False: a plain archive opened by name (--allow-unsealed): it vouches for nothing

    @classmethod
    def from_bytes(cls, data: bytes, source: str, sealed: bool = True) -> Archive:
        members: dict[str, bytes] = {}
        try:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
                for m in tar:
                    if m.isfile():
                        members[m.name] = tar.extractfile(m).read()  # type: ignore[union-attr]
        except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
            raise BackupUnreadable(f"{source} is not a readable backup ({type(exc).__name__}: {exc})",
                                   fix="use another backup from <home>/backups/; this one is damaged") from None
        if INDEX in members:
            try:
                index = json.loads(members.pop(INDEX))
            except ValueError:
                raise BackupUnreadable(f"{source}: its index is not JSON", fix="use another backup") from None
        elif "areas.json" in members:
            index = _format_one(members)
        else:
            raise BackupUnreadable(f"{source} holds no muninn backup index", fix="use a file `backup create` made")
        # A held file (backup_gate.hold) sealed here from an unsealed archive vouches for no more than it did.
        return cls(source, index, members, sealed and not index.get("unsealed_origin"))

    @property
    def server_files(self) -> list[dict[str, Any]]:
        """[{"member", "uri", "account", "read_as", "why"}]."""
        return list(self.index.get("server_files", []))

    @property
    def local_files(self) -> list[dict[str, Any]]:
        """[{"member", "part", "rel"}]."""
        return list(self.index.get("local_files", []))

    def read(self, member: str) -> bytes:
        try:
            return self.members[member]
        except KeyError:
            raise BackupUnreadable(f"{self.source} lacks {member}, which its index names",
                                   fix="use another backup: this one is incomplete") from None

    def problems(self) -> list[str]:
        """Every member whose bytes are not the hash the index holds, and every one missing or unnamed."""
        hashes: dict[str, str] = self.index.get("members", {})
        if not hashes:
            return [f"{self.source}: format {self.index.get('format', 1)} holds no hashes to check"]
        out = [f"{name}: missing" for name in sorted(set(hashes) - set(self.members))]
        out += [f"{name}: not named in the index" for name in sorted(set(self.members) - set(hashes))]
        out += [f"{name}: bytes differ from the stored hash" for name, digest in sorted(hashes.items())
                if name in self.members and sha(self.members[name]) != digest]
        return out


def _format_one(members: dict[str, bytes]) -> dict[str, Any]:
    """A format-1 backup as format-2 records: its areas' files, its config files, its manifests."""
    described = json.loads(members.pop("areas.json"))
    files = [{"member": f"areas/{n}/{rel}", "uri": f"{d['area']}/{rel}", "account": d.get("account", ""),
              "read_as": d.get("reader", "cli"), "why": "direct"}
             for n, d in enumerate(described) for rel in d.get("files", [])]
    local = [{"member": name, "part": _ONE_PARTS[name.split("/", 1)[0]](name), "rel": name.rsplit("/", 1)[-1]}
             for name in members if name.split("/", 1)[0] in _ONE_PARTS]
    return {"format": 1, "server_files": files, "local_files": local}


_ONE_PARTS = {
    "vault": lambda name: "vault",
    "sync": lambda name: "sync-manifests",
    "config": lambda name: "retired-hashes" if name.endswith("retired-hashes.json") else "policy",
}


def write_private(path: Path, data: bytes) -> None:
    """Whole or not at all, 0600 from the start (a backup holds the sealed vault and readers' notes)."""
    from muninn.core import atomic

    atomic.write_bytes(path, data, mode=0o600)
