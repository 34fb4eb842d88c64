"""The workspace format, and the ordered steps that bring an older workspace up to it.

`<home>/format.json` says which format a workspace is in. The first CLI command that loads the
settings after an upgrade of muninn runs `ensure`: each step newer than the workspace either runs
(`apply`, what muninn can do alone: files in the workspace) or, when it needs the server or the
user's sources, is named in one sentence with the command that does it. A step marked `required`
stops every command until that is done (UpgradeNeeded); the others are said once.

A part that owns a file in the workspace registers its own step through the `register_upgrades`
hook (muninn.core.registry), so this module never imports the parts above it (muninn.core.embed_record
registers the step that records an earlier workspace's embedding model). format.json itself is
muninn.core.format_file's. Any later format change (dates with a time of day, a renamed key) adds a
step here or through that hook, never a second mechanism.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from muninn.core import format_file, registry
from muninn.core.errors import ExitCode, MuninnError
from muninn.core.workspace import Workspace

if TYPE_CHECKING:
    from muninn.core.config import Settings


class UpgradeNeeded(MuninnError):
    """The workspace needs a step muninn cannot take alone, or is newer than this muninn."""

    exit_code = ExitCode.UPGRADE_NEEDED


@dataclass(frozen=True)
class Step:
    to: int                                          # the format a workspace is in once this is done
    what: str                                        # what changed, one sentence
    apply: Callable[[Path], None] | None = None      # muninn does it, given the home
    # ... or given the settings, for what lies outside the home (keyring entries named by it)
    apply_settings: Callable[[Settings], None] | None = None
    command: str | None = None                       # else the command that does it
    required: bool = False                           # a command refuses to run until it is done
    # Does this workspace still hold something the step changes? A step with nothing to change is
    # skipped; a required one is cleared by running its command, after which this says False.
    pending: Callable[[Path], bool] = lambda home: True


def _exports_exist(home: Path) -> bool:
    exports = Workspace(home).exports
    return any(exports.rglob("*.md")) if exports.is_dir() else False


# An observation exported before format 5: `<date>/<tool slug>-<12 hex digest>.md`, words of the agent's
# tool name in a path every reader sees outside the untrusted-data label.
_OLD_OBSERVATION = re.compile(r"^(\d{4}-\d{2}-\d{2}|undated)/[a-z0-9][a-z0-9-]*-[0-9a-f]{12}\.md$")


def _old_observation_names(home: Path) -> bool:
    exports = Workspace(home).exports
    if not exports.is_dir():
        return False
    for path in exports.rglob("*.md"):
        name = f"{path.parent.name}/{path.name}"
        if _OLD_OBSERVATION.match(name) and "\nsource: observations\n" in path.read_text(errors="replace")[:2000]:
            return True
    return False


_STEPS: list[Step] = [
    Step(1, "notes now take their date from a dated heading or file name, and notes and observations carry "
            "their neighbouring context", command="muninn export all && muninn sync all", pending=_exports_exist),
    Step(5, "exported observations are named by their date and digest, no word of the agent's tool or input",
         command="muninn export all && muninn sync all --prune", pending=_old_observation_names),
]


def steps() -> list[Step]:
    """muninn's own steps plus those the parts own (the `register_upgrades` hook)."""
    return [*_STEPS, *registry.upgrade_steps()]


def current() -> int:
    return max(s.to for s in steps())


def _read_format(home: Path, now: int) -> int | None:
    try:
        return format_file.read_format(home)
    except format_file.DamagedFormat as exc:
        fix = f'write {{"format": {now}}} into it, or remove it to redo the upgrade'
        raise UpgradeNeeded(exc.message, fix=fix) from None


def _stamp(home: Path, fmt: int) -> None:
    # Other keys (the embedding model's record, muninn.core.embed_record) survive a new format.
    at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    format_file.write(home, {**format_file.format_data(home), "format": fmt, "at": at})


def ensure(home: Path, say: Callable[[str], None], settings: Settings | None = None) -> list[str]:
    """Bring `home` to the current format. Returns the notices it gave (each also passed to `say`).
    `settings` (the CLI passes them) lets the steps that need them run; without, they are skipped."""
    now = current()
    fmt = _read_format(home, now)
    if fmt is None:                  # a new workspace starts in the current format
        _stamp(home, now)
        return []
    if fmt == now:
        return []
    # First commands started together: one upgrades, the others wait for it and find it done.
    with (home / ".upgrade.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _ensure_locked(home, say, settings, now)


def _ensure_locked(home: Path, say: Callable[[str], None], settings: Settings | None, now: int) -> list[str]:
    fmt = _read_format(home, now) or 0
    if fmt > now:
        raise UpgradeNeeded(f"workspace {home} is in format {fmt}, newer than this muninn (format {now})",
                            fix="upgrade muninn, or point MUNINN_HOME at another workspace")
    notices: list[str] = []
    for step in sorted((s for s in steps() if s.to > fmt), key=lambda s: s.to):
        if not step.pending(home):
            continue
        if step.apply is not None:
            step.apply(home)
            continue
        if step.apply_settings is not None:
            if settings is not None:
                step.apply_settings(settings)
            continue
        message = f"workspace upgrade: {step.what}; run `{step.command}`"
        if step.required:
            # Stamped only up to the step before: every command says it again until it is done.
            _stamp(home, step.to - 1)
            raise UpgradeNeeded(message)
        notices.append(message)
        say(message)
    _stamp(home, now)
    return notices
