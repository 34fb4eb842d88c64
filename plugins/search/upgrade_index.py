"""The keyword index's part of a workspace upgrade: every index in the workspace is opened once, so
it moves to the current layout (keyword.LAYOUT) on the first command after an upgrade, not on the
first search. An index elsewhere (`search.index`) moves when it is next opened.

Format 4 takes out of every reader's index, and its vector cache, what its policy does not let it
read: before it, a nested area the reader does not hold (shared/private inside a readable shared) was
filled into the reader's index by the owner's sync."""

from __future__ import annotations

from pathlib import Path

from muninn.core import upgrade
from muninn.core.cliutil import say
from muninn.core.config import Settings
from muninn.core.errors import ConfigError
from muninn.core.workspace import Workspace


def _indexes(home: Path) -> list[Path]:
    folder = Workspace(home).search_indexes
    return sorted(folder.glob("*.sqlite")) if folder.is_dir() else []


# The index modules are imported by the steps that run, not by every command that lists the steps.
def _reopen(home: Path) -> None:
    from muninn.plugins.search import keyword

    for path in _indexes(home):
        keyword.connect(path).close()


STEP = upgrade.Step(
    1, "keyword indexes re-read each file's date (observations remembered before format 1 were undated)",
    apply=_reopen, pending=lambda home: bool(_indexes(home)))


def purge_readers(settings: Settings) -> None:
    """Every policy reader's index and vector cache purged of what it may not read. With a policy that
    does not load, nothing can be judged, so every reader's index but the configured identity's own
    goes (they are rebuilt from the server by `muninn search-index --all` and each MCP server's start)."""
    from muninn.plugins.search import dense, reader_index

    try:
        policy = reader_index.policy_or_none(settings)
    except ConfigError as exc:
        gone = [p for p in _indexes(settings.home) if p != settings.paths.search_index()]
        for path in gone:
            for file in (path, *dense.cache_paths(path)):
                file.unlink(missing_ok=True)
        say(f"workspace upgrade: policy.yaml does not load ({exc.message}), so {len(gone)} reader index(es) "
            "that may hold files their reader may not read were removed; fix it, then run "
            "`muninn search-index --all`")
        return
    if policy is None:
        return
    for profile in policy.profiles.values():
        done = reader_index.purge(settings, profile)
        if done.files:
            say(f"workspace upgrade: reader {profile.name!r}: {done.files} file(s) its policy does not let it "
                f"read taken out of its keyword index, {done.vectors} vector(s) out of its vector cache")


PURGE = upgrade.Step(
    4, "each reader's keyword index and vector cache hold only what its policy lets it read (nested areas)",
    apply_settings=purge_readers, pending=lambda home: bool(_indexes(home)))
