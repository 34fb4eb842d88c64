"""Keep the syncing reader's keyword index current: sync announces what it wrote and removed
(the `after_sync` hook, registered by muninn.plugins.search.plugin)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from muninn.core.config import Settings
from muninn.plugins.search import keyword


def refresh_keyword_index(settings: Settings, area: str, written: Mapping[str, str],
                          removed: Sequence[str]) -> None:

    path = settings.paths.search_index()
    if written:
        keyword.index_facts(path, written)
    if removed:
        keyword.remove_facts(path, removed)
