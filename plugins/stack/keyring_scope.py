"""The workspace upgrade step that moves keys stored under plain keyring names (`openviking:root`,
`openviking:<account>:<user>`, the vault key) into this workspace's scope (credentials.for_server,
for_home). Before format 2 the names were global, so two stacks on one machine overwrote each
other's keys; the first workspace to upgrade takes the plain entries (they were its, or already
clobbered), a second one makes its own again with `muninn up` / `muninn policy apply`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from muninn.core import credentials, upgrade
from muninn.core.config import Settings
from muninn.core.errors import CredentialError
from muninn.core.hookspecs import hookimpl


def move_plain_names(settings: Settings) -> list[str]:
    """Move every plain-named key muninn stored into its scope; returns the names moved."""
    try:
        plain = credentials.Keyring(settings.keyring.backend)
        names = plain.stored_names()
    except CredentialError:
        return []     # no usable keyring: the commands that need a key say so themselves
    server, home = credentials.for_server(settings), credentials.for_home(settings)
    moved = []
    for name in names:
        if "@" in name:
            continue  # already scoped (to this workspace or another)
        ring = home if name == settings.vault.key_name else server if name.startswith("openviking:") else None
        value = plain.get(name) if ring is not None else None
        if ring is None or value is None:
            continue
        if ring.get(name) is None:
            ring.set(name, value)
        plain.delete(name)
        moved.append(name)
    return moved


STEP = upgrade.Step(2, "keyring entries are named by server URL and workspace, so two stacks on one machine "
                       "keep their own keys", apply_settings=lambda s: move_plain_names(s) and None)


@hookimpl
def register_upgrades(register: Callable[[Any], Any]) -> None:
    register(STEP)
