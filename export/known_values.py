"""Known values the configured sources found where secrets live (a repo's `.env` files), for every
redactor and leak gate: registered through `register_known_values` like the vault, not declared but
keyed: each value passed `setting_values` by the key it was read under (a `DB_PASSWORD` by the credential
rule, any other key by the guessed-value filter).

Read live on each call: the files are local, and a value changed in a `.env` counts at once. A source
whose path is absent (an unmounted disk) or that fails to read gives none; its own export says why.
"""

from __future__ import annotations

from muninn.core.config import Settings
from muninn.core.errors import MuninnError
from muninn.export import sources


def found(settings: Settings) -> list[tuple[str, str]]:
    if not settings.known_values.repo_env:
        return []
    out: list[tuple[str, str]] = []
    for s in settings.sources:
        cls = sources.get(s.kind)
        path = settings.paths.resolve(s.path)
        if not hasattr(cls, "known_values") or not path.exists():
            continue
        try:
            out += sources.build(s.kind, path, s.options).known_values()  # type: ignore[attr-defined]
        except MuninnError:
            continue   # export of that source fails loudly with this same error
    return out
