"""The keyword index's part of a workspace upgrade: every index in the workspace is opened once, so
it moves to the current layout (keyword.LAYOUT) on the first command after an upgrade, not on the
first search. An index elsewhere (`search.index`) moves when it is next opened."""

from __future__ import annotations

from pathlib import Path

from muninn.core import upgrade
from muninn.core.workspace import Workspace
from muninn.plugins.search import keyword


def _indexes(home: Path) -> list[Path]:
    folder = Workspace(home).search_indexes
    return sorted(folder.glob("*.sqlite")) if folder.is_dir() else []


def _reopen(home: Path) -> None:
    for path in _indexes(home):
        keyword.connect(path).close()


STEP = upgrade.Step(
    1, "keyword indexes re-read each file's date (observations remembered before format 1 were undated)",
    apply=_reopen, pending=lambda home: bool(_indexes(home)))
