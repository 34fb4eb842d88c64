"""Extension points between parts that may not import each other.

export and plugins are siblings (neither imports the other), yet a sync must keep the search
plugin's keyword index current. So export announces what it wrote here, and whoever cares
registers a hook, the same way an outside plugin would.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from muninn.core.config import Settings

# (settings, area, {uri: content written}, [uris removed])
AfterSync = Callable[[Settings, str, Mapping[str, str], Sequence[str]], None]
_AFTER_SYNC: list[AfterSync] = []


def on_after_sync(fn: AfterSync) -> AfterSync:
    if fn not in _AFTER_SYNC:
        _AFTER_SYNC.append(fn)
    return fn


def after_sync(settings: Settings, area: str, written: Mapping[str, str], removed: Sequence[str]) -> None:
    for fn in list(_AFTER_SYNC):
        fn(settings, area, written, removed)


# (settings, [(secret id, value)]): every value the vault holds just before a sync replaces them,
# so the nightly leak scan can remember retired values (as salted hashes) and still find them.
BeforeVaultSync = Callable[[Settings, Sequence[tuple[str, str]]], None]
_BEFORE_VAULT_SYNC: list[BeforeVaultSync] = []


def on_before_vault_sync(fn: BeforeVaultSync) -> BeforeVaultSync:
    if fn not in _BEFORE_VAULT_SYNC:
        _BEFORE_VAULT_SYNC.append(fn)
    return fn


def before_vault_sync(settings: Settings, values: Callable[[], Sequence[tuple[str, str]]]) -> None:
    """`values` is called (the store decrypted) only when someone listens."""
    if _BEFORE_VAULT_SYNC:
        held = values()
        for fn in list(_BEFORE_VAULT_SYNC):
            fn(settings, held)
