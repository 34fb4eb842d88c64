"""Idempotent account and user set-up, with the key stored in the keyring and proven to work.

A key-minting script that re-issues keys on a second run, and stores them in a way that fails
quietly, leaves every reader with a dead key minutes later. So: reuse a stored key that still
works; mint only when there is none (or it was revoked); store; read back; call the server with it.
"""

from __future__ import annotations

from dataclasses import dataclass

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
