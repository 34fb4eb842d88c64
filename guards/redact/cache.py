"""The redactor's tables (`redact.Tables`: every form of every known value), kept between processes.

A hook that starts a process per tool call (`muninn observe`) would otherwise make them again on every
call, and that part grows with the number of values. They hold the values, so the file is sealed with
AES-GCM under a key derived from the vault's own key (the same keyring entry, the same 0600 mode as the
vault store): the cache is never readable where the store is not. Without a vault key there is no cache.

The associated data is an HMAC, under that key, of the known values themselves, the encodings and the
code that makes the tables: a value added, rotated or removed anywhere (the vault, a secrets file, an
.env), or a new muninn, fails to open the old file and the tables are made again. Nothing else keys it,
so a stale table is impossible rather than unlikely.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from muninn.core import atomic
from muninn.core.config import Encoding, Settings
from muninn.core.credentials import for_home
from muninn.core.errors import CredentialError
from muninn.guards.known import dumps, forms
from muninn.guards.redact import redactor as redact

_CODE = (Path(forms.__file__), Path(redact.__file__), Path(dumps.__file__))


def cache_file(settings: Settings) -> Path:
    return settings.paths.vault_store.with_name("redact-tables.sealed")


def tables(settings: Settings, known: Mapping[str, str], encodings: Sequence[Encoding],
           views: bool) -> redact.Tables:
    """The tables for `known`: opened from the sealed file when it was made from exactly these values,
    else made now and sealed for the next process."""
    key = _key(settings)
    if key is None:
        return redact.Tables.of(known, encodings, views)
    aad = _fingerprint(key, known, encodings, views)
    path = cache_file(settings)
    try:
        blob = path.read_bytes()
        return _loads(AESGCM(key).decrypt(blob[:12], blob[12:], aad))
    except (OSError, InvalidTag, ValueError, KeyError, TypeError):
        pass    # none yet, made from other values or by another muninn: made again below
    made = redact.Tables.of(known, encodings, views)
    nonce = os.urandom(12)
    atomic.write_bytes(path, nonce + AESGCM(key).encrypt(nonce, _dumps(made), aad), mode=0o600)
    return made


def _key(settings: Settings) -> bytes | None:
    if not settings.paths.vault_store.exists():
        return None
    try:
        raw = for_home(settings).get(settings.vault.key_name)
    except CredentialError:
        return None     # the store's own read says why; the cache only saves time
    if raw is None:
        return None
    return hashlib.sha256(b"muninn-redact-tables\0" + base64.b64decode(raw)).digest()


def _fingerprint(key: bytes, known: Mapping[str, str], encodings: Sequence[Encoding], views: bool) -> bytes:
    code = hashlib.sha256(b"".join(p.read_bytes() for p in _CODE)).hexdigest()
    payload = json.dumps([sorted(known.items()), list(encodings), views, code], ensure_ascii=False)
    return hmac.new(key, payload.encode("utf-8", "surrogatepass"), hashlib.sha256).digest()


def _dumps(t: redact.Tables) -> bytes:
    return json.dumps({"needles": t.needles, "view": t.view, "fold": t.fold, "heads": t.heads, "views": t.views,
                       "dumped": [[b.hex(), i] for b, i in t.dumped.items()]},
                      ensure_ascii=False).encode("utf-8", "surrogatepass")


def _loads(data: bytes) -> redact.Tables:
    d = json.loads(data.decode("utf-8", "surrogatepass"))
    return redact.Tables(needles=[tuple(n) for n in d["needles"]], view=d["view"], fold=d["fold"],
                         dumped={bytes.fromhex(b): i for b, i in d["dumped"]}, heads=d["heads"],
                         views=d["views"])
