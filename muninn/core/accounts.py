"""Idempotent account and user set-up, with the key stored in the keyring and proven to work.

A key-minting script that re-issues keys on a second run, and stores them in a way that fails
quietly, leaves every reader with a dead key minutes later. So: reuse a stored key that still
works; mint only when there is none (or it was revoked); store; read back; call the server with it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from muninn.core import credentials
from muninn.core.client import OpenViking
from muninn.core.errors import AuthError, CredentialError


@dataclass
class Ensured:
    account: str
    user: str
    key_name: str
    action: str  # "kept" | "created account" | "registered user" | "re-issued key"


def _works(url: str, key: str, name: str) -> bool:
    with OpenViking(url, key, key_name=name) as client:
        try:
            client.ls("viking://resources")
            return True
        except AuthError:
            return False


def ensure_user(root: OpenViking, ring: credentials.Keyring, account: str, user: str,
                role: str = "admin") -> Ensured:
    """Make `account`/`user` exist with a working key in the keyring. Safe to re-run."""
    name = credentials.user_key_name(account, user)
    stored = ring.get(name)
    if stored and _works(root.url, stored, name):
        return Ensured(account, user, name, "kept")
    if not root.account_exists(account):
        key = root.create_account(account, user)
        action = "created account"
    elif user not in root.list_users(account):
        key = root.register_user(account, user, role=role)
        action = "registered user"
    else:
        key = root.regenerate_key(account, user)
        action = "re-issued key"
    ring.set(name, key)  # reads back and raises if the store did not keep it
    if not _works(root.url, ring.require(name, fix="check the keyring backend"), name):
        raise CredentialError(f"the key stored as {name!r} was rejected by the server right after minting",
                              fix="check that server.url points at the server that minted it")
    return Ensured(account, user, name, action)


# --- when each account was created -----------------------------------------------------------
# An observation dated before its account existed cannot be true. OpenViking's account listing
# carries `created_at` (root only), but the MCP server runs as a reader, never as root: so
# `policy apply` records each account's creation time here, and the guard reads the record.

def created_record(workspace: Path) -> Path:
    return Path(workspace) / "accounts" / "created.json"


def server_created_at(root: OpenViking, account: str) -> datetime | None:
    """The server's own `created_at` for `account`, if its listing has one."""
    for row in root.list_accounts():
        if row.get("account_id") == account and row.get("created_at"):
            try:
                moment = datetime.fromisoformat(str(row["created_at"]).replace("Z", "+00:00"))
            except ValueError:
                return None
            return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return None


def record_created(workspace: Path, account: str, when: datetime) -> datetime:
    """Keep the earliest creation time known for `account` (a re-run never moves it later)."""
    path = created_record(workspace)
    data = json.loads(path.read_text()) if path.exists() else {}
    known = created_at(workspace, account)
    when = min(when, known) if known else when
    data[account] = when.isoformat()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    tmp.replace(path)
    return when


def created_at(workspace: Path, account: str) -> datetime | None:
    path = created_record(workspace)
    if not path.exists():
        return None
    value = json.loads(path.read_text()).get(account)
    return datetime.fromisoformat(value) if value else None
