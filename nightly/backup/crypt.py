"""Backups are sealed, so they are safe to copy off the host: AES-256-GCM under a key kept in the keyring
(`backup:key`, scoped by the workspace like the vault's), created with the first backup. As restic and
borg do, the owner exports that key once (`muninn key export --backup --to FILE`, sealed again with a
passphrase) and imports it on a new host (`key import --from FILE`); without it no backup opens.
The key file (scrypt from the passphrase, then AES-GCM, its kind authenticated) is this module's one
format for every key that travels: key_transfer.py writes readers' and the vault's keys with it.

A sealed file is MAGIC + a 12-byte nonce + the ciphertext of the tar.gz; the file name is authenticated
with it, so a backup renamed to pass for another does not open. Only a sealed file opens: a plain
tar.gz (as made before sealing) is what anyone who can write the folder can forge, so it opens only when
the owner asks by name (`--allow-unsealed`), and then still passes the restore's confinement and gate.

A passphrase that seals a key file must be one an offline guesser does not find: zxcvbn's estimate of at
least 10^10 guesses (its top score), checked when a key file is written; an old file still opens.
"""

from __future__ import annotations

import base64
import json
import os
import re
import unicodedata
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from muninn.core import atomic, credentials
from muninn.core.config import Settings
from muninn.core.errors import ConfigError, CredentialError
from muninn.nightly.backup.archive import BackupRefused, BackupUnreadable

MAGIC = b"MUNINN-BACKUP-AESGCM-1\n"
MIN_GUESSES_LOG10 = 10.0      # zxcvbn's score 4: "strong protection from an offline slow-hash attack"
GZIP = b"\x1f\x8b"
KEY_NAME = "backup:key"
KEY_FILE_KIND = "muninn-backup-key"


def _ring(settings: Settings) -> credentials.Keyring:
    return credentials.for_home(settings)


def key(settings: Settings, create: bool = False) -> bytes:
    raw = _ring(settings).get(KEY_NAME)
    if raw is None:
        if not create:
            raise CredentialError(f"the backup key {KEY_NAME!r} is not in the keyring",
                                  fix="import it with `muninn key import --from FILE` (from `key export --backup`)")
        raw = base64.b64encode(AESGCM.generate_key(bit_length=256)).decode()
        _ring(settings).set(KEY_NAME, raw)
    return base64.b64decode(raw)


def seal(settings: Settings, data: bytes, name: str) -> bytes:
    nonce = os.urandom(12)
    return MAGIC + nonce + AESGCM(key(settings, create=True)).encrypt(nonce, data, name.encode())


def open_bytes(settings: Settings, path: Path, allow_unsealed: bool = False) -> bytes:
    """The tar.gz bytes of a sealed backup file; of a plain one only with `allow_unsealed`."""
    return open_file(settings, path, allow_unsealed)[0]


def open_file(settings: Settings, path: Path, allow_unsealed: bool = False) -> tuple[bytes, bool]:
    """(the tar.gz bytes, whether they were sealed), from one read of the file."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BackupUnreadable(f"{path}: {exc.strerror}", fix="check the path and its permissions") from None
    if data.startswith(GZIP):
        if not allow_unsealed:
            raise BackupRefused(f"{path} is not sealed: a plain archive that anyone able to write the file could "
                                "have made, so it is not opened",
                                fix="use a sealed backup (.mbk); only for one you made before sealing and trust, "
                                    "pass --allow-unsealed")
        return data, False
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 12 + 16:
        raise BackupUnreadable(f"{path} is not a muninn backup (or is cut off)", fix="use another backup")
    nonce, sealed = data[len(MAGIC):len(MAGIC) + 12], data[len(MAGIC) + 12:]
    try:
        return AESGCM(key(settings)).decrypt(nonce, sealed, path.name.encode()), True
    except InvalidTag:
        raise BackupUnreadable(f"{path} does not open with the backup key in the keyring: damaged, cut off, "
                               f"renamed, or sealed with another key",
                               fix="import the key it was made with (`muninn key import --from FILE`), or use "
                                   "another backup") from None


def _kdf(salt: bytes) -> Scrypt:
    return Scrypt(salt=salt, length=32, n=2**15, r=8, p=1)


# Phrases published as passphrase examples (xkcd 936, typing drills, the famous song) are the first an
# offline guesser tries; zxcvbn scores them as random words. Matched with their separators taken out.
_PUBLISHED = ("correcthorsebatterystaple", "tr0ub4dor&3", "thequickbrownfoxjumpsoverthelazydog",
              "nevergonnagiveyouup", "nevergonnaletyoudown", "iamthewalrus", "maytheforcebewithyou",
              "muninn", "openviking", "passphrase", "password", "backupkey", "vaultkey")


def _views(passphrase: str) -> set[str]:
    """The passphrase as a guesser would try it: as typed, NFKC (full-width letters), separators taken out
    (letters spaced apart, dotted or dashed words), lower case; the first 72 characters (zxcvbn's limit)."""
    plain = unicodedata.normalize("NFKC", passphrase)
    bare = re.sub(r"[\s._\-/,:;|+*~]+", "", plain)
    return {v[:72] for v in (passphrase, plain, bare, plain.lower(), bare.lower()) if v}


def check_passphrase(passphrase: str) -> None:
    """Refuse a passphrase too short or too guessable to seal a key file: zxcvbn's estimate, taken at the
    weakest of the views a guesser would try (`_views`)."""
    from zxcvbn import zxcvbn

    if len(passphrase) < 8:
        raise ConfigError("the passphrase is empty or shorter than 8 characters", key="passphrase",
                          fix="choose a longer one: it is all that guards the key file")
    weakest = min((zxcvbn(v, user_inputs=list(_PUBLISHED)) for v in _views(passphrase)),
                  key=lambda e: e["guesses_log10"])
    if weakest["guesses_log10"] < MIN_GUESSES_LOG10:
        hint = weakest["feedback"].get("warning") or "it is too easy to guess"
        raise ConfigError(f"the passphrase is too weak to seal a key file ({hint.rstrip('.')}; about "
                          f"10^{weakest['guesses_log10']:.0f} guesses)", key="passphrase",
                          fix="use four or more words picked at random (a diceware list), not a known phrase")


def write_key_file(dest: Path, passphrase: str, kind: str, secret: bytes) -> None:
    """`secret` sealed with a key derived from `passphrase` (scrypt), written to `dest`: 0600, never over
    an existing file. Only the kind and the KDF's parameters are in clear; `kind` is authenticated too,
    so a reader's key file cannot be imported as the backup key."""
    check_passphrase(passphrase)
    if dest.exists():
        raise ConfigError("refusing to overwrite an existing file", path=str(dest), fix="choose a new path")
    salt, nonce = os.urandom(16), os.urandom(12)
    body = AESGCM(_kdf(salt).derive(passphrase.encode())).encrypt(nonce, secret, kind.encode())
    doc = {"kind": kind, "kdf": "scrypt-n32768-r8-p1", "salt": base64.b64encode(salt).decode(),
           "nonce": base64.b64encode(nonce).decode(), "sealed": base64.b64encode(body).decode()}
    atomic.write_text(dest, json.dumps(doc, indent=1) + "\n", mode=0o600)


def export_key(settings: Settings, dest: Path, passphrase: str) -> None:
    """Write the backup key sealed with `passphrase` to `dest`."""
    check_passphrase(passphrase)
    write_key_file(dest, passphrase, KEY_FILE_KIND, key(settings))


def _doc(path: Path) -> dict:
    try:
        doc = json.loads(path.read_text())
        if not isinstance(doc, dict):
            raise TypeError
        return doc
    except (OSError, ValueError, TypeError, UnicodeDecodeError):
        raise ConfigError("not a muninn key file", path=str(path), fix="use the file `key export` wrote") from None


def file_kind(path: Path) -> str:
    """The kind a key file says it is (in clear, and checked again when it opens)."""
    return str(_doc(path).get("kind"))


def read_key_file(path: Path, passphrase: str, kind: str = KEY_FILE_KIND) -> bytes:
    doc = _doc(path)
    try:
        salt, nonce, body = (base64.b64decode(doc[k], validate=True) for k in ("salt", "nonce", "sealed"))
    except (ValueError, KeyError, TypeError):
        raise ConfigError("not a muninn key file", path=str(path), fix="use the file `key export` wrote") from None
    if doc.get("kind") != kind:
        raise ConfigError(f"a key file of kind {doc.get('kind')!r}, not {kind!r}", path=str(path),
                          fix="use the matching import command")
    try:
        return AESGCM(_kdf(salt).derive(passphrase.encode())).decrypt(nonce, body, kind.encode())
    except (InvalidTag, ValueError):
        raise CredentialError(f"{path} does not open with that passphrase: a wrong passphrase, or the file "
                              f"was changed since export", fix="type the passphrase given at export, or "
                              "export the key again") from None


def import_key(settings: Settings, path: Path, passphrase: str) -> None:
    raw = read_key_file(path, passphrase)
    have = _ring(settings).get(KEY_NAME)
    if have is not None and base64.b64decode(have) != raw:
        raise ConfigError("this workspace already has another backup key", key=KEY_NAME,
                          fix="its backups would no longer open: import into a new workspace")
    _ring(settings).set(KEY_NAME, base64.b64encode(raw).decode())
