"""Credentials in the OS keyring (service `muninn`), never in YAML, logs or reports.

The backend is always chosen explicitly. On a headless host the keyring default is the `fail`
backend, and keyrings.alt's chain tries EncryptedKeyring first, which prompts for a password and
dies with EOFError under cron or CI. So: `keyring.backend` in muninn.yaml, else
`$PYTHON_KEYRING_BACKEND`, else the platform keyring, and a loud CredentialError if that is
unusable. keyring itself does not list names, so muninn keeps an index entry of the names it stored.

Names are scoped, so two stacks on one machine (two homes, or the test suite beside a real setup)
never overwrite each other's keys: an OpenViking key is stored as `<name>@<server URL>#<home>`
(`for_server`), the vault key as `<name>@#<home>` (`for_home`: it belongs to the workspace, whatever
server it talks to). Code and messages use the plain names (`openviking:root`); the workspace upgrade
step (keyring_upgrade.py) moves keys stored under plain names before this into the scope.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
from typing import TYPE_CHECKING

import keyring
import keyring.backend
import keyring.errors

from muninn.core.errors import CredentialError

if TYPE_CHECKING:
    from muninn.core.config import Settings

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

    def __init__(self, backend: str | None = None, scope: str | None = None) -> None:
        self.scope = scope
        if backend:
            self.backend = _load_backend(backend)
        else:
            self.backend = keyring.get_keyring()
        name = backend_name(self.backend)
        if "fail" in name.lower() or ("chainer" in name.lower() and not self._chain_ok()):
            raise CredentialError(f"no usable keyring backend (got {name})", fix=_FIX)
        # keyring ranks keyrings.alt's plaintext file above its `fail` backend, so on a host with no
        # Secret Service it picks a base64 file on its own. docs/security.md promises no silent fallback.
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

    def stored_name(self, name: str) -> str:
        return f"{name}@{self.scope}" if self.scope is not None and name != _INDEX else name

    def get(self, name: str) -> str | None:
        try:
            return self.backend.get_password(SERVICE, self.stored_name(name))
        except (keyring.errors.KeyringError, EOFError, OSError) as exc:
            raise CredentialError(f"keyring ({self.name}) failed to read {name!r}: {exc}", fix=_FIX) from None

    def require(self, name: str, fix: str) -> str:
        value = self.get(name)
        if not value:
            raise CredentialError(f"no key named {name!r} in the keyring ({self.name})", fix=fix)
        return value

    def set(self, name: str, value: str) -> None:
        """Store and read back: a store that fails quietly is how keys stop working minutes later."""
        stored = self.stored_name(name)
        try:
            self.backend.set_password(SERVICE, stored, value)
        except (keyring.errors.KeyringError, EOFError, OSError) as exc:
            raise CredentialError(f"keyring ({self.name}) failed to store {name!r}: {exc}", fix=_FIX) from None
        if self.get(name) != value:
            raise CredentialError(f"keyring ({self.name}) did not keep {name!r}: read-back differs", fix=_FIX)
        if name != _INDEX:
            names = set(self.stored_names())
            if stored not in names:
                self._write_index(sorted(names | {stored}))

    def delete(self, name: str) -> None:
        stored = self.stored_name(name)
        with contextlib.suppress(keyring.errors.PasswordDeleteError):
            self.backend.delete_password(SERVICE, stored)
        self._write_index([n for n in self.stored_names() if n != stored])

    def stored_names(self) -> list[str]:
        """Every name muninn stored in this backend, in every scope (the index is shared)."""
        raw = self.backend.get_password(SERVICE, _INDEX)
        return list(json.loads(raw)) if raw else []

    def names(self) -> list[str]:
        """The plain names stored in this keyring's scope (all of them when it has none)."""
        if self.scope is None:
            return self.stored_names()
        tail = f"@{self.scope}"
        return [n[: -len(tail)] for n in self.stored_names() if n.endswith(tail)]

    def _write_index(self, names: list[str]) -> None:
        self.backend.set_password(SERVICE, _INDEX, json.dumps(names))


def _chosen_outside() -> bool:
    """Whether the person chose keyring's backend outside muninn.yaml: the environment variable, or
    keyring's own config file (keyringrc.cfg)."""
    if os.environ.get("PYTHON_KEYRING_BACKEND"):
        return True
    from keyring.core import load_config

    return load_config() is not None


def probe(backend: str | None) -> None:
    """Raise CredentialError when no usable keyring backend is there (no key is read or written)."""
    Keyring(backend)


def for_server(settings: Settings) -> Keyring:
    """The keyring for OpenViking keys: scoped by the server's URL and the workspace."""
    return Keyring(settings.keyring.backend, scope=f"{settings.server.base_url}#{settings.workspace}")


def for_home(settings: Settings) -> Keyring:
    """The keyring for the workspace's own keys (the vault's): scoped by the workspace alone."""
    return Keyring(settings.keyring.backend, scope=f"#{settings.workspace}")


def root_key_name() -> str:
    return "openviking:root"


def user_key_name(account: str, user: str) -> str:
    return f"openviking:{account}:{user}"
