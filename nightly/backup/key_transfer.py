"""Keys that travel to another host, as passphrase-sealed files (the format is backup_crypt's, its one
owner): a reader's OpenViking key, for a reader that runs elsewhere, and the vault's key, for a new
machine whose restored vault store is sealed with it.

A reader's file holds, sealed, its profile, account, user and key: nothing in clear but the kind and
the KDF's parameters, and never the profile's areas (the importing host has its own policy.yaml). On
import the key is proven before it is stored: a real call as that reader, listing an area it may read.
The vault key is proven against the store on this host when there is one: every value must open.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path

from muninn.core import credentials
from muninn.core import policy as policy_mod
from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.core.errors import AuthError, ConfigError, CredentialError, NotFound
from muninn.nightly.backup import crypt as backup_crypt

READER_KIND = "muninn-reader-key"
VAULT_KIND = "muninn-vault-key"


@dataclass
class Moved:
    """What an export wrote or an import stored (never the key)."""

    kind: str
    path: str
    profile: str | None = None
    key_name: str | None = None
    proven_by: str | None = None
    replaced: bool | None = None  # a different key of the same name was in the keyring before the import

    def to_json(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


def export_reader(settings: Settings, profile: str, dest: Path, passphrase: str) -> Moved:
    prof = policy_mod.load_for(settings).profile(profile)
    key = credentials.for_server(settings).require(
        prof.key_name, fix=f"run `muninn policy apply` on this host first: it mints {profile!r}'s key")
    backup_crypt.check_passphrase(passphrase)
    payload = {"profile": prof.name, "account": prof.account, "user": prof.user, "key": key}
    backup_crypt.write_key_file(dest, passphrase, READER_KIND, json.dumps(payload).encode())
    return Moved(READER_KIND, str(dest), profile=prof.name, key_name=prof.key_name)


def _prove(settings: Settings, prof: policy_mod.Profile, key: str) -> str:
    """A real authenticated call as the reader; the URI it listed."""
    uri = (prof.read_prefixes or ("viking://resources",))[0]
    with OpenViking(settings.server.base_url, key, key_name=prof.key_name) as client:
        try:
            client.ls(uri)
        except AuthError:
            raise AuthError(f"the server at {settings.server.base_url} rejects the key for {prof.name!r} "
                            f"(listing {uri}): it was minted by another server, or re-issued since",
                            fix="export it again on the host whose `policy apply` minted it, and check "
                                "`server.url` here points at that server") from None
        except NotFound:
            raise NotFound(f"{uri}, an area {prof.name!r} may read, is not on the server at "
                           f"{settings.server.base_url}, so the key cannot be proven",
                           fix="run `muninn policy apply` (or `backup restore --all`) on the owner's host "
                               "first, and check `server.url`") from None
    return uri


def import_reader(settings: Settings, src: Path, passphrase: str, profile: str | None = None) -> Moved:
    raw = backup_crypt.read_key_file(src, passphrase, READER_KIND)
    try:
        got = json.loads(raw)
        name, account, user, key = (str(got[k]) for k in ("profile", "account", "user", "key"))
    except (ValueError, KeyError, TypeError):
        raise ConfigError("a reader key file without its reader", path=str(src),
                          fix="export it again with `muninn key export --profile NAME`") from None
    prof = policy_mod.load_for(settings).profile(profile or name)
    if (prof.account, prof.user) != (account, user):
        raise ConfigError(f"the key in this file is {account}/{user}'s, but {prof.name!r} here is "
                          f"{prof.account}/{prof.user}", path=str(src),
                          fix="pass the --profile whose account and user match, or fix policy.yaml")
    proven = _prove(settings, prof, key)
    ring = credentials.for_server(settings)
    before = ring.get(prof.key_name)
    ring.set(prof.key_name, key)
    return Moved(READER_KIND, str(src), profile=prof.name, key_name=prof.key_name, proven_by=f"ls {proven}",
                 replaced=True if before not in (None, key) else None)


def export_vault(settings: Settings, dest: Path, passphrase: str) -> Moved:
    name = settings.vault.key_name
    raw = credentials.for_home(settings).require(
        name, fix="this workspace has no vault key yet: `muninn secret load` creates it")
    backup_crypt.check_passphrase(passphrase)
    backup_crypt.write_key_file(dest, passphrase, VAULT_KIND, base64.b64decode(raw))
    return Moved(VAULT_KIND, str(dest), key_name=name)


def export_backup(settings: Settings, dest: Path, passphrase: str) -> Moved:
    backup_crypt.export_key(settings, dest, passphrase)
    return Moved(backup_crypt.KEY_FILE_KIND, str(dest), key_name=backup_crypt.KEY_NAME)


def import_backup(settings: Settings, src: Path, passphrase: str) -> Moved:
    """Proven by opening: a wrong passphrase or a changed file is refused before anything is stored."""
    backup_crypt.import_key(settings, src, passphrase)
    return Moved(backup_crypt.KEY_FILE_KIND, str(src), key_name=backup_crypt.KEY_NAME)


class _Given:
    """The one key under test, where the vault store expects a keyring (it only reads its key)."""

    name = "the imported key file"

    def __init__(self, key_name: str, value: str) -> None:
        self.key_name, self.value = key_name, value

    def get(self, name: str) -> str | None:
        return self.value if name == self.key_name else None


def import_vault(settings: Settings, src: Path, passphrase: str) -> Moved:
    from muninn.plugins.access.store import Store

    value = base64.b64encode(backup_crypt.read_key_file(src, passphrase, VAULT_KIND)).decode()
    name, ring = settings.vault.key_name, credentials.for_home(settings)
    have = ring.get(name)
    if have is not None and have != value:
        raise ConfigError("this workspace already has another vault key", key=name,
                          fix="the values sealed with it would no longer open: import into a new workspace")
    proven = None
    store_path = settings.paths.vault_store
    if store_path.is_file():
        store = Store(store_path, _Given(name, value), name)  # type: ignore[arg-type]
        try:
            opened = len(store.all_values())
        except CredentialError:
            raise CredentialError(f"the vault store {store_path} does not open with this key",
                                  fix="import the vault key of the workspace the store came from") from None
        finally:
            store.close()
        proven = f"{opened} value(s) opened in {store_path}"
    ring.set(name, value)
    return Moved(VAULT_KIND, str(src), key_name=name, proven_by=proven)


def import_any(settings: Settings, src: Path, passphrase: str, profile: str | None = None) -> Moved:
    """Dispatch on the file's kind (authenticated again when it opens)."""
    kind = backup_crypt.file_kind(src)
    if kind == READER_KIND:
        return import_reader(settings, src, passphrase, profile)
    if kind == VAULT_KIND:
        if profile:
            raise ConfigError("a vault key file belongs to no reader", key="--profile", fix="drop --profile")
        return import_vault(settings, src, passphrase)
    if kind == backup_crypt.KEY_FILE_KIND:
        if profile:
            raise ConfigError("a backup key file belongs to no reader", key="--profile", fix="drop --profile")
        return import_backup(settings, src, passphrase)
    raise ConfigError(f"not a key file muninn reads (kind {kind!r})", path=str(src),
                      fix="use a file `muninn key export` wrote")
