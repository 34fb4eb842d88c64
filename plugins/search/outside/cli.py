"""`muninn outside key NAME`: the key an HTTP outside memory takes, into the keyring (never muninn.yaml)."""

from __future__ import annotations

import sys

import typer

from muninn.core.cliutil import say, settings
from muninn.core.errors import ConfigError

app = typer.Typer(help="Other tools' memories a search asks in place (muninn.yaml `outside:`).")


@app.command("key")
def key_cmd(ctx: typer.Context,
            name: str = typer.Argument(..., help="The outside memory, as muninn.yaml's `outside:` names it."),
            delete: bool = typer.Option(False, "--delete", help="Remove its key instead.")) -> None:
    """Store the key an HTTP outside memory takes, read from stdin (one line), in the keyring as
    `outside:NAME` in this workspace's scope; it is sent as a bearer token. Never in muninn.yaml, never in
    the environment. Exit 2 for a name muninn.yaml does not declare as an http memory.

    \b
    Examples:
      printf '%s\\n' "$HQ_KEY" | muninn outside key team
      muninn outside key team --delete
    """
    from muninn.core import credentials

    s = settings(ctx)
    if not any(o.name == name and o.kind == "http" for o in s.outside):
        raise ConfigError(f"{name!r} is not an http outside memory of muninn.yaml", key="NAME",
                          fix="declare it under `outside:` with kind: http")
    ring = credentials.for_home(s)
    if delete:
        ring.delete(f"outside:{name}")
        say(f"removed the key of outside memory {name}")
        return
    value = sys.stdin.readline().strip()
    if not value:
        raise ConfigError("no key on stdin", key="stdin", fix="pipe the key in, one line")
    ring.set(f"outside:{name}", value)
    say(f"stored the key of outside memory {name} in the keyring (outside:{name})")
