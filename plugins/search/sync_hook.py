"""Keep the syncing reader's keyword index current: sync announces what it wrote and removed
(the `after_sync` hook, registered by muninn.plugins.search.plugin)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from muninn.core.config import Settings
from muninn.plugins.search import keyword


def refresh_keyword_index(settings: Settings, area: str, written: Mapping[str, str],
                          removed: Sequence[str]) -> None:
    # Imported here: pipeline pulls in the reranker loader, which `muninn --help` must not pay for.
    from muninn.plugins.search.pipeline import index_path

    path = index_path(settings)
    if written:
        keyword.index_facts(path, written)
    if removed:
        keyword.remove_facts(path, removed)
