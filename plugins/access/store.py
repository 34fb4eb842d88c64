"""The encrypted store: one SQLite file, values sealed with AES-GCM under a key in the OS keyring.

Each value is sealed with a fresh 96-bit nonce and the secret's id as associated data, so a
ciphertext copied onto another row fails to open instead of answering for the wrong id. Change
detection uses an HMAC of the value under a key derived from the vault key (a plain hash of a
short password is guessable offline; the HMAC is not without the keyring). Metadata is plain
JSON: it is what `find` searches and what the export indexes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import sqlite3
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from muninn.core import sqlitefile
from muninn.core.config import Settings
from muninn.core.credentials import Keyring, for_home
from muninn.core.errors import ConfigError, CredentialError, ExitCode, MuninnError, Refused
from muninn.core.secrets_file import Located

SCHEMA = """
CREATE TABLE IF NOT EXISTS secrets (
    id TEXT PRIMARY KEY,
    meta TEXT NOT NULL,
    nonce BLOB NOT NULL,
    sealed BLOB NOT NULL,
    digest TEXT NOT NULL,
    source TEXT,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS retired (
    n INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    meta TEXT NOT NULL,
    nonce BLOB NOT NULL,
    sealed BLOB NOT NULL,
    digest TEXT NOT NULL,
    source TEXT,
    created_at TEXT,
    retired_at TEXT NOT NULL,
    why TEXT NOT NULL
);
"""
# Added later (`muninn secret list`): when an id first got a value, and when its value last changed.
# NULL in a store made before them: not known.
DATE_COLUMNS = ("created_at", "rotated_at")
# `retired`: values no longer usable (`secret retire`, a value `secret load` or `secret add --replace`
# replaced, an entry sync found gone), sealed as they were (same id, same associated data): still known
# for redaction and masking (`all_values`), never injected or printed (`values` refuses their id).


class VaultDamaged(MuninnError):
    """The store file is truncated or corrupt: nothing in it can be trusted or read."""

    exit_code = ExitCode.VAULT_DAMAGED

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"the vault store {path} is unreadable ({problem})",
                         fix="restore it: `muninn secret load` rebuilds it from the secrets YAML (the damaged "
                             "file is kept aside), or copy back a backup")


class RetiredSecret(Refused):
    """A retired id: its value is kept only so it stays redacted; nothing may use it."""

    def __init__(self, secret_id: str, when: str) -> None:
        super().__init__(f"secret {secret_id!r} was retired on {when[:10]} and can no longer be used",
                         fix=f"to use the id again, give it a new value with `muninn secret add {secret_id}`; "
                             "the retired value stays redacted")


class UnknownSecret(MuninnError):
    exit_code = ExitCode.BAD_INPUT

    def __init__(self, secret_id: str) -> None:
        super().__init__(f"no secret with id {secret_id!r} in the vault",
                         fix="`muninn secret find WORDS` lists ids; `muninn secret load` loads new ones")


@dataclass
class SyncReport:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    moved_aside: str | None = None   # a damaged store this sync replaced

    def as_dict(self) -> dict:
        out: dict = {"added": self.added, "changed": self.changed, "removed": self.removed,
                     "unchanged": self.unchanged}
        return out | ({"moved_aside": self.moved_aside} if self.moved_aside else {})


def _owner_only(path: Path, fresh: bool) -> str | None:
    """Mode 0600 on every open, not only a new file's: a store restored or copied with a wider mode
    (a backup unpacked under umask 022) would hand its sealed values and metadata to every local
    account. Narrowed, and said (stderr, and the sentence returned for a caller's report)."""
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077 or fresh:
        try:
            os.chmod(path, 0o600)
        except OSError as exc:
            raise ConfigError(f"{path} is mode {mode:03o} and cannot be set to 600 ({exc.strerror})",
                              path=str(path), fix=f"chmod 600 {path} as its owner") from None
    if fresh or not mode & 0o077:
        return None
    said = f"{path} was mode {mode:03o} (group or others could read it): set to 600"
    sys.stderr.write(f"warning: {said}\n")
    return said


class Store:
    def __init__(self, path: Path, keyring: Keyring, key_name: str = "vault:key", *, repair: bool = False) -> None:
        """`repair`: a damaged store is moved aside (`moved_aside`) and a new one started (secret load)."""
        self.path = Path(path)
        self.moved_aside: Path | None = None
        self.keyring = keyring
        self.key_name = key_name
        self._aead: AESGCM | None = None
        self._mac_key: bytes | None = None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not self.path.exists()
        # A truncated store opens as an empty one: every secret would be "unknown" instead of unreadable.
        if not fresh and (problem := sqlitefile.quick_check(self.path, ("secrets",))):
            if not repair:
                raise VaultDamaged(self.path, problem)
            self.moved_aside = self.path.with_name(f"{self.path.name}.damaged-{datetime.now(UTC):%Y%m%dT%H%M%S}")
            for extra in ("-journal", "-wal", "-shm"):
                Path(f"{self.path}{extra}").unlink(missing_ok=True)
            self.path.rename(self.moved_aside)
            fresh = True
        self.db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self.narrowed = _owner_only(self.path, fresh)
        self.db.executescript(SCHEMA)
        have = {row[1] for row in self.db.execute("PRAGMA table_info(secrets)")}
        for column in DATE_COLUMNS:
            if column not in have:
                self.db.execute(f"ALTER TABLE secrets ADD COLUMN {column} TEXT")

    def close(self) -> None:
        self.db.close()

    # --- the key ---------------------------------------------------------------------------
    def _key(self, create: bool) -> None:
        if self._aead is not None:
            return
        raw = self.keyring.get(self.key_name)
        if raw is None:
            if not create:
                raise CredentialError(f"the vault key {self.key_name!r} is not in the keyring ({self.keyring.name})",
                                      fix="run `muninn secret load` to create it, or restore the keyring")
            if self._count() > 0:
                # A store with rows and no key is unreadable; a new key would silently orphan every value.
                raise CredentialError(f"the vault key {self.key_name!r} is missing but {self.path} holds secrets",
                                      fix="restore the keyring entry, or delete the store and sync again")
            raw = base64.b64encode(AESGCM.generate_key(bit_length=256)).decode()
            self.keyring.set(self.key_name, raw)
        key = base64.b64decode(raw)
        self._aead = AESGCM(key)
        self._mac_key = hashlib.sha256(b"muninn-vault-digest\0" + key).digest()

    def _digest(self, values: dict[str, str]) -> str:
        assert self._mac_key is not None
        payload = json.dumps(values, sort_keys=True).encode()
        return hmac.new(self._mac_key, payload, hashlib.sha256).hexdigest()

    def _seal(self, secret_id: str, values: dict[str, str]) -> tuple[bytes, bytes]:
        assert self._aead is not None
        nonce = os.urandom(12)
        return nonce, self._aead.encrypt(nonce, json.dumps(values).encode(), secret_id.encode())

    def _open(self, secret_id: str, nonce: bytes, sealed: bytes) -> dict[str, str]:
        assert self._aead is not None
        try:
            return json.loads(self._aead.decrypt(nonce, sealed, secret_id.encode()))
        except InvalidTag:
            raise CredentialError(f"secret {secret_id!r} does not decrypt with the key in the keyring",
                                  fix="the keyring entry was replaced: restore it, or delete the store and sync") \
                from None

    # --- sync ------------------------------------------------------------------------------
    def sync(self, entries: list[Located], dry_run: bool = False) -> SyncReport:
        """Make the store equal to `entries` in one transaction: all of it lands, or none."""
        self._key(create=True)
        report = SyncReport()
        now = datetime.now(UTC).isoformat(timespec="seconds")
        current = {row[0]: (row[1], row[2]) for row in self.db.execute("SELECT id, meta, digest FROM secrets")}
        wanted = {loc.entry.id for loc in entries}
        with self._transaction():
            for loc in entries:
                entry = loc.entry
                meta = json.dumps(entry.metadata(), sort_keys=True)
                old = current.get(entry.id)
                if not entry.in_file:
                    # Metadata only: the value `secret add` stored stays (so does a value whose line was
                    # deleted from the YAML after a sync: its parts with it); only the metadata can change.
                    if old is None:
                        when = self.retired_on(entry.id)
                        raise ConfigError(f"secret {entry.id!r} has no value in the file and none in the vault"
                                          + (f" (its value was retired on {when[:10]})" if when else ""),
                                          path=str(loc.path), line=loc.line,
                                          fix=f"run `muninn secret add {entry.id}` to store its value")
                    parts = json.loads(old[0]).get("parts", [])
                    meta = json.dumps(entry.metadata() | {"parts": parts}, sort_keys=True)
                    if old[0] == meta:
                        report.unchanged += 1
                    else:
                        report.changed.append(entry.id)
                        if not dry_run:
                            self.db.execute("UPDATE secrets SET meta = ?, source = ?, updated_at = ? WHERE id = ?",
                                            (meta, f"{loc.path}:{loc.line}", now, entry.id))
                    continue
                digest = self._digest(entry.values())
                if old == (meta, digest):
                    report.unchanged += 1
                    continue
                (report.added if old is None else report.changed).append(entry.id)
                if dry_run:
                    continue
                if old is not None and old[1] != digest:
                    self._archive(entry.id, now, "replaced")
                self._upsert(entry.id, meta, entry.values(), f"{loc.path}:{loc.line}", now, digest)
            for gone in sorted(set(current) - wanted):
                report.removed.append(gone)
                if not dry_run:
                    self._retire_row(gone, now, "removed")
        return report

    def put(self, located: Located, values: dict[str, str]) -> None:
        """Store `values` under a metadata-only entry (`muninn secret add`): sealed here, never in a file."""
        self._key(create=True)
        now = datetime.now(UTC).isoformat(timespec="seconds")
        entry = located.entry
        digest = self._digest(values)
        with self._transaction():
            old = self.db.execute("SELECT digest FROM secrets WHERE id = ?", (entry.id,)).fetchone()
            if old is not None and old[0] != digest:
                self._archive(entry.id, now, "replaced")
            self._upsert(entry.id, json.dumps(entry.metadata(), sort_keys=True), values,
                         f"{located.path}:{located.line}", now, digest)

    def _upsert(self, secret_id: str, meta: str, values: dict[str, str], source: str, now: str,
                digest: str) -> None:
        nonce, sealed = self._seal(secret_id, values)
        # A new id is created now; an id whose value changed (not only its metadata) is rotated now.
        self.db.execute(
            "INSERT INTO secrets (id, meta, nonce, sealed, digest, source, updated_at, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET meta=excluded.meta, "
            "nonce=excluded.nonce, sealed=excluded.sealed, digest=excluded.digest, "
            "source=excluded.source, updated_at=excluded.updated_at, rotated_at=CASE WHEN "
            "secrets.digest != excluded.digest THEN excluded.updated_at ELSE secrets.rotated_at END",
            (secret_id, meta, nonce, sealed, digest, source, now, now))

    def put_values(self, secret_id: str, values: dict[str, str], source: str) -> None:
        """Seal `values` under `secret_id` with no secrets-YAML entry behind them: a cache of values read
        elsewhere (plugins/access/kube_values.py), in this same sealed format."""
        self._key(create=True)
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self._transaction():
            self._upsert(secret_id, "{}", values, source, now, self._digest(values))

    def retire(self, secret_id: str) -> None:
        """Move `secret_id`'s live row among the retired values (`muninn secret retire`), in one step."""
        if not self.has(secret_id):
            raise self.missing(secret_id)
        with self._transaction():
            self._retire_row(secret_id, datetime.now(UTC).isoformat(timespec="seconds"), "retired")

    def _retire_row(self, secret_id: str, now: str, why: str) -> None:
        """Move the live row of `secret_id` among the retired values. Inside a caller's transaction."""
        self._archive(secret_id, now, why)
        self.db.execute("DELETE FROM secrets WHERE id = ?", (secret_id,))

    def _archive(self, secret_id: str, now: str, why: str) -> None:
        """Copy the live value of `secret_id` among the retired values (once per distinct value): before it
        is replaced, or retired. The sealed bytes are copied as they are (no key needed)."""
        # The same value retired again (re-added, then retired) keeps one row, with the newest date.
        self.db.execute("DELETE FROM retired WHERE id = ? AND digest = (SELECT digest FROM secrets WHERE id = ?)",
                        (secret_id, secret_id))
        self.db.execute(
            "INSERT INTO retired (id, meta, nonce, sealed, digest, source, created_at, retired_at, why) "
            "SELECT id, meta, nonce, sealed, digest, source, created_at, ?, ? FROM secrets WHERE id = ?",
            (now, why, secret_id))

    def delete(self, secret_id: str) -> None:
        self.db.execute("DELETE FROM secrets WHERE id = ?", (secret_id,))

    def updated(self) -> dict[str, str]:
        """{secret id: when its value was last written (ISO 8601, UTC)}."""
        return dict(self.db.execute("SELECT id, updated_at FROM secrets ORDER BY id").fetchall())

    def has(self, secret_id: str) -> bool:
        return self.db.execute("SELECT 1 FROM secrets WHERE id = ?", (secret_id,)).fetchone() is not None

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # --- reads -----------------------------------------------------------------------------
    def _count(self) -> int:
        """Live and retired rows: both are sealed under the key."""
        return self.db.execute("SELECT (SELECT count(*) FROM secrets) + (SELECT count(*) FROM retired)").fetchone()[0]

    def retired_on(self, secret_id: str) -> str | None:
        """When `secret_id` was last retired (ISO 8601, UTC), if it was and has no live value now."""
        if self.has(secret_id):
            return None
        row = self.db.execute("SELECT max(retired_at) FROM retired WHERE id = ?", (secret_id,)).fetchone()
        return row[0] if row else None

    def missing(self, secret_id: str) -> MuninnError:
        when = self.retired_on(secret_id)
        return RetiredSecret(secret_id, when) if when else UnknownSecret(secret_id)

    def retired_rows(self) -> list[dict]:
        """Metadata of every retired value, oldest first: {id, meta..., source, created_at, retired_at, why}.
        Never a value."""
        rows = self.db.execute("SELECT id, meta, source, created_at, retired_at, why FROM retired ORDER BY n")
        return [json.loads(m) | {"id": i, "source": s, "created_at": c, "retired_at": r, "why": w}
                for i, m, s, c, r, w in rows]

    def ids(self) -> list[str]:
        return [row[0] for row in self.db.execute("SELECT id FROM secrets ORDER BY id")]

    def metadata(self, secret_id: str) -> dict:
        row = self.db.execute("SELECT meta, source, updated_at FROM secrets WHERE id = ?", (secret_id,)).fetchone()
        if row is None:
            raise self.missing(secret_id)
        return json.loads(row[0]) | {"source": row[1], "synced_at": row[2]}

    def dates(self) -> dict[str, dict[str, str | None]]:
        """{secret id: {source, created_at, rotated_at, updated_at}}: what `secret list` shows beside the
        metadata. Never a value."""
        rows = self.db.execute("SELECT id, source, created_at, rotated_at, updated_at FROM secrets ORDER BY id")
        return {i: {"source": s, "created_at": c, "rotated_at": r, "updated_at": u} for i, s, c, r, u in rows}

    def all_metadata(self) -> list[dict]:
        rows = self.db.execute("SELECT meta, source, updated_at FROM secrets ORDER BY id")
        return [json.loads(m) | {"source": s, "synced_at": u} for m, s, u in rows]

    def retired_only(self) -> set[str]:
        """Every retired value no live secret holds (decrypted here; for the server scan's labels)."""
        if not self.db.execute("SELECT 1 FROM retired LIMIT 1").fetchone():
            return set()
        self._key(create=False)
        live = {v for i, n, s in self.db.execute("SELECT id, nonce, sealed FROM secrets").fetchall()
                for v in self._open(i, n, s).values()}
        rows = self.db.execute("SELECT id, nonce, sealed FROM retired").fetchall()
        return {v for i, n, s in rows for v in self._open(i, n, s).values()} - live

    def values(self, secret_id: str) -> dict[str, str]:
        """{part or '': value}, decrypted in this process. Callers inject it; they never print it. A
        retired id is refused (RetiredSecret): its value is only for redaction."""
        row = self.db.execute("SELECT nonce, sealed FROM secrets WHERE id = ?", (secret_id,)).fetchone()
        if row is None:
            raise self.missing(secret_id)
        self._key(create=False)
        return self._open(secret_id, row[0], row[1])

    def all_values(self) -> list[tuple[str, str, str]]:
        """(secret id, part or '', value) for every stored value, retired ones too: what masking, export
        redaction, the leak gates and MCP output look for."""
        if self._count() == 0:
            return []
        self._key(create=False)
        rows = self.db.execute("SELECT id, nonce, sealed FROM secrets UNION ALL "
                               "SELECT id, nonce, sealed FROM retired ORDER BY id").fetchall()
        return [(secret_id, part, value) for secret_id, nonce, sealed in rows
                for part, value in self._open(secret_id, nonce, sealed).items()]


def retired_values(settings: Settings) -> set[str]:
    """The values of `stored_values` that are only retired (no live secret of the store holds them)."""
    path = settings.paths.vault_store
    if not path.exists():
        return set()
    store = Store(path, for_home(settings), settings.vault.key_name)
    try:
        return store.retired_only()
    finally:
        store.close()


def stored_values(settings: Settings) -> list[tuple[str, str]]:
    """(secret id or `id.part`, value) for every value in the vault's store; none when there is no store.
    A damaged store raises VaultDamaged and a store the keyring key cannot open raises CredentialError:
    a redactor must not quietly work without the values it was meant to hide."""
    path = settings.paths.vault_store
    if not path.exists():
        return []
    store = Store(path, for_home(settings), settings.vault.key_name)
    try:
        return [(f"{sid}.{part}" if part else sid, value) for sid, part, value in store.all_values()]
    finally:
        store.close()
