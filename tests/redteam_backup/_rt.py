"""Shared helpers for the red-team tests of backup restore/verify, key files and exec env scrubbing.
No product code here: archives are built with the product's own pack() and seal(), as an insider (or a
forger, for unsealed archives) would."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
import uuid
from pathlib import Path

import yaml

from muninn.core import config
from muninn.nightly.backup import archive as backup_archive
from muninn.nightly.backup import crypt as backup_crypt

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
V = "jt9Xq2vLr7Pz4Kw8Mn3Bd6Fh"            # examples/secrets.yaml: jira-api-token
RAVEN = "viking://resources/agents/raven"
SHARED = "viking://resources/shared"

GREEDY_POLICY = """version: 1
areas:
  roadmap: viking://resources/roadmap
  repos: viking://resources/repos
  shared: viking://resources/shared
  vault: viking://resources/vault
  raven: viking://resources/agents/raven
readers:
  owner:
    kind: owner
    account: {account}
    user: owner
    areas: {{roadmap: manage, repos: manage, shared: manage, vault: manage, raven: manage}}
    remember_to: shared
  raven:
    kind: agent
    account: {account}
    user: raven
    areas: {{shared: manage, vault: manage, roadmap: manage, repos: manage, raven: manage}}
    remember_to: raven
"""


def workspace(tmp: Path, account: str = "home", with_policy: bool = True) -> config.Settings:
    ws = tmp / "ws"
    ws.mkdir(parents=True, exist_ok=True)
    shutil.copy(EXAMPLES / "secrets.yaml", ws / "secrets.yaml")
    if with_policy:
        (ws / "policy.yaml").write_text((EXAMPLES / "policy.yaml").read_text().replace("account: home",
                                                                                       f"account: {account}"))
    (ws / "muninn.yaml").write_text(yaml.safe_dump({
        "home": str(tmp / "home"), "guard": {"policy": "policy.yaml"}, "vault": {"files": ["secrets.yaml"]},
        "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"}, "known_values": {"kubernetes": False},
        "openviking": {"account": account, "user": "owner"}}))
    return config.load(ws / "muninn.yaml")


def archive_bytes(members: dict[str, bytes], server_files: list[dict], local_files: list[dict] = (),
                  extra: dict | None = None) -> bytes:
    index = {"created": "2026-12-01T00:00:00+00:00", "server_files": list(server_files),
             "local_files": list(local_files), **(extra or {})}
    return backup_archive.pack(members, index)


def sealed(settings, folder: Path, data: bytes, name: str | None = None) -> Path:
    path = folder / (name or f"muninn-backup-{uuid.uuid4().hex[:8]}.mbk")
    path.write_bytes(backup_crypt.seal(settings, data, path.name))
    return path


def unsealed(folder: Path, data: bytes, name: str | None = None) -> Path:
    path = folder / (name or f"muninn-backup-{uuid.uuid4().hex[:8]}.tar.gz")
    path.write_bytes(data)
    return path


def server_rec(account: str, uri: str, read_as: str = "raven", **over) -> dict:
    return {"member": backup_archive.server_member(account, uri), "uri": uri, "account": account,
            "read_as": read_as, "why": "direct", **over}


def local_rec(part: str, rel: str) -> dict:
    return {"member": backup_archive.local_member(part, rel), "part": part, "rel": rel}


def raw_tar_gz(entries: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def index_json(**kw) -> bytes:
    return json.dumps(kw).encode()
