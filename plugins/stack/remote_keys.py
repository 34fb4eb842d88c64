"""Keys muninn keeps for parts it does not run: a remote OpenViking's root key (`muninn server key`) and
the embedding provider's (`muninn embed key`). Each goes into the keyring scope the code reads it from
(muninn.core.credentials), never into a file; a server key is proven by a call before it is stored."""

from __future__ import annotations

import sys
from collections.abc import Callable

import typer

from muninn.core import accounts, credentials
from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.core.errors import ConfigError

Say = Callable[[str], None]


def read_key(what: str, stdin: bool) -> str:
    """From a pipe with --stdin, else asked at the terminal with the echo off; never from an argument."""
    if not stdin and not sys.stdin.isatty():
        raise ConfigError("stdin is not a terminal, so there is nowhere to ask for the key", key="key",
                          fix="pipe it in with --stdin, or run this at a terminal")
    if stdin:
        value = sys.stdin.read().strip()
    else:
        try:
            value = typer.prompt(what, hide_input=True).strip()
        except typer.Abort:
            raise ConfigError("no key was given", key="key", fix="type it at the prompt, or use --stdin") from None
    if not value:
        raise ConfigError("the key is empty", key="key", fix=f"give {what}")
    return value


def for_url(settings: Settings, url: str | None) -> Settings:
    """These settings with server.url set to `url` (the scope a key for that server is read from)."""
    if not url:
        return settings
    server = settings.server.model_copy(update={"url": url.rstrip("/")})
    return settings.model_copy(update={"server": server})


def set_server_key(settings: Settings, key: str, url: str | None, say: Say) -> accounts.Ensured:
    """Prove `key` as `url`'s root key (an admin call), store it where muninn reads it, and make sure the
    CLI's own user (openviking.account/.user) exists there with a working key. Nothing is stored when the
    server refuses the key (AuthError, exit 5)."""
    target = for_url(settings, url)
    base = target.server.base_url
    with OpenViking(base, key, key_name=credentials.root_key_name(), timeout=target.server.timeout) as root:
        found = root.list_accounts()           # an admin-only call: a user key or a wrong key fails here
    say(f"{base}: the key is a root key ({len(found)} account(s) listed)")
    credentials.for_server(target).set(credentials.root_key_name(), key)
    if url and settings.server.url and settings.server.url.rstrip("/") != base:
        say(f"note: muninn.yaml's server.url is {settings.server.url}; muninn reads this key once server.url is {base}")
    elif url and not settings.server.url:
        say(f"note: set `server.url: {base}` in muninn.yaml so muninn talks to that server")
    with OpenViking(base, key, key_name=credentials.root_key_name(), timeout=target.server.timeout) as root:
        return accounts.ensure_user(root, credentials.for_server(target), target.openviking.account,
                                    target.openviking.user)


def set_provider_key(settings: Settings, key: str) -> str:
    from muninn.plugins.embed.forward import KEY_NAME

    credentials.for_home(settings).set(KEY_NAME, key)
    return KEY_NAME
