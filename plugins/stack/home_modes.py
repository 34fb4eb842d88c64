"""Everything muninn keeps under its home is private: files 0600, folders 0700. The keyword indexes
and vector caches hold the memory's text, the audit log what agents asked, the server's data all of it.

The CLI sets the umask to 077 before any command runs (muninn/cli.py), so every file and folder it
creates, and those of the server and sidecar it starts, are born private. This module is the check
(`muninn doctor`) and the workspace upgrade step that tightens a home written before. The server
venv's programs are left as pip made them.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from muninn.core import upgrade
from muninn.core.checks import Check
from muninn.core.config import Settings
from muninn.core.hookspecs import hookimpl

UMASK = 0o077
SKIP = frozenset({"server-venv"})     # a venv in the home (the default layout): programs, not data


def loose(home: Path, skip: frozenset[str] = SKIP) -> list[Path]:
    """Files and folders under `home` that the group or others may read, write or enter."""
    out: list[Path] = []
    if not home.is_dir():
        return out
    for root, dirs, files in os.walk(home):
        if Path(root) == home:
            dirs[:] = [d for d in dirs if d not in skip]
        for name in (*dirs, *files):
            path = Path(root, name)
            try:
                mode = path.lstat().st_mode
            except FileNotFoundError:
                continue
            if not stat.S_ISLNK(mode) and mode & 0o077:
                out.append(path)
    if home.stat().st_mode & 0o077:
        out.insert(0, home)
    return out


def tighten(home: Path) -> int:
    """Take group and other rights away from everything `loose` finds. Returns how many."""
    found = loose(home)
    for path in found:
        path.chmod(path.lstat().st_mode & 0o700)
    return len(found)


def check(settings: Settings) -> list[Check]:
    home = settings.workspace
    found = loose(home)
    if not found:
        return [Check("home permissions", "ok", f"{home}: files 0600, folders 0700")]
    shown = ", ".join(f"{p} ({p.lstat().st_mode & 0o777:o})" for p in found[:3])
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    return [Check("home permissions", "fail", f"{len(found)} path(s) under {home} readable by others: {shown}{more}",
                  f"chmod -R go-rwx {home}")]


def _tighten_step(home: Path) -> None:
    tighten(home)


STEP = upgrade.Step(3, "everything under the workspace is private (files 0600, folders 0700)",
                    apply=_tighten_step, pending=lambda home: bool(loose(home)))


@hookimpl
def register_checks(register: Callable[[Any], Any]) -> None:
    register(check)


@hookimpl
def register_upgrades(register: Callable[[Any], Any]) -> None:
    register(STEP)
