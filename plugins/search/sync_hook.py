"""Keep every reader's keyword index current: sync announces what it wrote and removed (the
`after_sync` hook, registered by muninn.plugins.search.plugin). Which readers get a file is the
policy's decision (reader_index.after_write)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from muninn.core.config import Settings
from muninn.plugins.search import reader_index


def refresh_keyword_index(settings: Settings, area: str, written: Mapping[str, str],
                          removed: Sequence[str]) -> None:
    reader_index.after_write(settings, written, removed, reader_index.policy_or_none(settings))
