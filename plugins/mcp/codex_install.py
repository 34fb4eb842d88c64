"""`muninn mcp install --client codex`: muninn's MCP server in Codex's own config.toml, and out again.

Codex reads a stdio server from an `[mcp_servers.NAME]` table of `$CODEX_HOME/config.toml` (default
`~/.codex`). muninn's tables are one block between two marker lines, appended at the end: TOML lets a
table stand anywhere at the top level, so nothing the person wrote is parsed and written back (their
comments, order and formatting stay as they were), and `--uninstall` cuts exactly that block. The text is
read with tomllib before and after the change: a file that does not parse, or that holds a `muninn`
server muninn did not write (or `mcp_servers` as an inline table, which a table cannot extend), is named
and nothing is written.

The block is `muninn mcp config --client codex`'s snippet (muninn.plugins.mcp.rules owns that format).

Only the server: Codex's hooks (hooks.json) are not installed. Codex runs a hook it did not ship only once
the person has reviewed and trusted it, and muninn's SessionEnd hook runs a whole `watch` cycle, which a
session-end hook's short time limit would cut; Claude Code's hooks are the ones muninn installs and tests.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path

from muninn.core import atomic
from muninn.core.errors import ConfigError
from muninn.plugins.mcp.client_install import SERVER_NAME, Change

BEGIN = "# >>> muninn: written by `muninn mcp install --client codex`; `--uninstall` removes this block"
END = "# <<< muninn"
_FIX = "repair the file (muninn changes only its own block and wrote nothing)"


def config_file(person: Path, environ: Mapping[str, str] = os.environ) -> Path:
    home = environ.get("CODEX_HOME")
    return (Path(home).expanduser() if home else person / ".codex") / "config.toml"


def _parse(path: Path, text: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", path=str(path), fix=_FIX) from None


def _without_block(text: str) -> tuple[str, bool]:
    """The text with muninn's block (and the blank line before it) cut out, and whether there was one."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        return text, False
    stop = text.find("\n", end)
    head, tail = text[:start].rstrip("\n"), text[stop + 1:] if stop >= 0 else ""
    return (head + "\n" if head else "") + tail, True


def check(path: Path) -> None:
    """Raise for a file muninn must not change (called before any client file is touched)."""
    if path.exists():
        rest, _ = _without_block(path.read_text(encoding="utf-8"))
        servers = _parse(path, rest).get("mcp_servers", {})
        if isinstance(servers, dict) and SERVER_NAME in servers:
            raise ConfigError(f"mcp_servers.{SERVER_NAME} is already there and muninn did not write it",
                              path=str(path), fix="remove or rename that table, then run this again")


def install(path: Path, snippet: str) -> Change:
    check(path)
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    rest, had = _without_block(old)
    new = (rest.rstrip("\n") + "\n\n" if rest.strip() else "") + f"{BEGIN}\n{snippet.rstrip()}\n{END}\n"
    got = _parse(path, new).get("mcp_servers")
    if not isinstance(got, dict) or SERVER_NAME not in got:
        raise ConfigError("mcp_servers is an inline table here, which muninn's table cannot join", path=str(path),
                          fix="write mcp_servers as [mcp_servers.NAME] tables, or add muninn's by hand "
                              "(`muninn mcp config --client codex`)")
    if new == old:
        return Change(path, "unchanged")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(path, new, path.stat().st_mode & 0o777 if path.exists() else 0o600)
    return Change(path, f"{'replaced' if had else 'added'} the {SERVER_NAME!r} server in mcp_servers")


def uninstall(path: Path) -> Change:
    if not path.exists():
        return Change(path, "unchanged")
    old = path.read_text(encoding="utf-8")
    new, had = _without_block(old)
    if not had:
        return Change(path, "unchanged")
    _parse(path, new)
    atomic.write_text(path, new, path.stat().st_mode & 0o777)
    return Change(path, f"removed the {SERVER_NAME!r} server from mcp_servers")
