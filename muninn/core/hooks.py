"""Extension points between parts that may not import each other.

export and plugins are siblings (neither imports the other), yet a sync must keep the search
plugin's keyword index current. So export announces what it wrote here, and whoever cares
registers a hook, the same way an outside plugin would.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from muninn.core.config import Settings

# (settings, area, {uri: content written}, [uris removed])
AfterSync = Callable[[Settings, str, Mapping[str, str], Sequence[str]], None]
_AFTER_SYNC: list[AfterSync] = []


def on_after_sync(fn: AfterSync) -> AfterSync:
    if fn not in _AFTER_SYNC:
        _AFTER_SYNC.append(fn)
    return fn


def after_sync(settings: Settings, area: str, written: Mapping[str, str], removed: Sequence[str]) -> None:
    for fn in list(_AFTER_SYNC):
        fn(settings, area, written, removed)
