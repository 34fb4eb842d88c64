"""Credentials in the OS keyring (service `muninn`), never in YAML, logs or reports.

The backend is always chosen explicitly. On a headless host the keyring default is the `fail`
backend, and keyrings.alt's chain tries EncryptedKeyring first, which prompts for a password and
dies with EOFError under cron or CI. So: `keyring.backend` in muninn.yaml, else
`$PYTHON_KEYRING_BACKEND`, else the platform keyring, and a loud CredentialError if that is
unusable. keyring itself does not list names, so muninn keeps an index entry of the names it stored.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os

import keyring
import keyring.backend
import keyring.errors

from muninn.core.errors import CredentialError

SERVICE = "muninn"
_INDEX = "_index"
PLAINTEXT_BACKENDS = {"keyrings.alt.file.PlaintextKeyring"}

_FIX = (
    "choose a backend explicitly: set `keyring: {backend: keyrings.alt.file.PlaintextKeyring}` in "
    "muninn.yaml or PYTHON_KEYRING_BACKEND (file backend, only base64 on disk), or run under a "
    "desktop session with a Secret Service"
)


def backend_name(backend: keyring.backend.KeyringBackend) -> str:
    cls = type(backend)
    return f"{cls.__module__}.{cls.__qualname__}"


def _load_backend(name: str) -> keyring.backend.KeyringBackend:
    module, _, cls = name.rpartition(".")
    try:
        return getattr(importlib.import_module(module), cls)()
    except (ImportError, AttributeError, ValueError) as exc:
        raise CredentialError(f"keyring backend {name!r} cannot be loaded: {exc}", fix=_FIX) from None


class Keyring:
    """A thin, loud wrapper over one explicit keyring backend."""

    def __init__(self, backend: str | None = None) -> None:
        if backend:
            self.backend = _load_backend(backend)
        else:
            self.backend = keyring.get_keyring()
        name = backend_name(self.backend)
        if "fail" in name.lower() or ("chainer" in name.lower() and not self._chain_ok()):
            raise CredentialError(f"no usable keyring backend (got {name})", fix=_FIX)
        # keyring ranks keyrings.alt's plaintext file above its `fail` backend, so on a host with no
        # Secret Service it picks a base64 file on its own. The README promises no silent fallback.
        if not backend and not _chosen_outside() and self._first_is_plaintext():
            raise CredentialError(f"keyring chose the plaintext file backend {name} on its own (values only "
                                  "base64-encoded on disk)", fix=_FIX)
        self.name = name

    def _first_is_plaintext(self) -> bool:
        first = (getattr(self.backend, "backends", None) or [self.backend])[0]
        return backend_name(first) in PLAINTEXT_BACKENDS

    def _chain_ok(self) -> bool:
        backends = getattr(self.backend, "backends", [])
        # EncryptedKeyring prompts on stdin; under cron/CI that is an EOFError mid-run.
        return bool(backends) and not any("Encrypted" in backend_name(b) for b in backends)

    @property
    def is_plaintext(self) -> bool:
        return self.name in PLAINTEXT_BACKENDS

    def get(self, name: str) -> str | None:
        try:
            return self.backend.get_password(SERVICE, name)
        except (keyring.errors.KeyringError, EOFError, OSError) as exc:
            raise CredentialError(f"keyring ({self.name}) failed to read {name!r}: {exc}", fix=_FIX) from None

    def require(self, name: str, fix: str) -> str:
        value = self.get(name)
        if not value:
            raise CredentialError(f"no key named {name!r} in the keyring ({self.name})", fix=fix)
        return value

    def set(self, name: str, value: str) -> None:
        """Store and read back: a store that fails quietly is how keys stop working minutes later."""
        try:
            self.backend.set_password(SERVICE, name, value)
        except (keyring.errors.KeyringError, EOFError, OSError) as exc:
            raise CredentialError(f"keyring ({self.name}) failed to store {name!r}: {exc}", fix=_FIX) from None
        if self.get(name) != value:
            raise CredentialError(f"keyring ({self.name}) did not keep {name!r}: read-back differs", fix=_FIX)
        if name != _INDEX:
            names = set(self.names())
            if name not in names:
                self._write_index(sorted(names | {name}))

    def delete(self, name: str) -> None:
        with contextlib.suppress(keyring.errors.PasswordDeleteError):
            self.backend.delete_password(SERVICE, name)
        self._write_index([n for n in self.names() if n != name])

    def names(self) -> list[str]:
        raw = self.get(_INDEX)
        return list(json.loads(raw)) if raw else []

    def _write_index(self, names: list[str]) -> None:
        self.backend.set_password(SERVICE, _INDEX, json.dumps(names))


def _chosen_outside() -> bool:
    """Whether the person chose keyring's backend outside muninn.yaml: the environment variable, or
    keyring's own config file (keyringrc.cfg)."""
    if os.environ.get("PYTHON_KEYRING_BACKEND"):
        return True
    from keyring.core import load_config

    return load_config() is not None


def root_key_name() -> str:
    return "openviking:root"


def user_key_name(account: str, user: str) -> str:
    return f"openviking:{account}:{user}"
