"""Value redaction for everything the MCP server sends out or logs.

The known values are the vault's (the secrets YAML files in `vault.files`) plus any extra files
in `guard.secret_files`; the replacement itself is the shared redactor in muninn.guards.redact,
the same one the exporter and the leak gate use. There is no fallback: if the values cannot be
read, the server does not start.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from muninn.core.config import Settings
from muninn.guards import secret_values
from muninn.guards.redact import Redactor


def _resolve(settings: Settings, files: Iterable[Path]) -> list[Path]:
    base = settings.source_file.parent if settings.source_file is not None else Path.cwd()
    out = []
    for f in files:
        f = f.expanduser()
        out.append(f if f.is_absolute() else base / f)
    return out


def known_files(settings: Settings) -> list[Path]:
    return _resolve(settings, [*settings.vault.files, *settings.guard.secret_files])


class ValueRedactor:
    """`scrub(text)` replaces every known secret value in one pass."""

    def __init__(self, known: dict[str, str]) -> None:
        self.count = len(known)
        self._redactor = Redactor(known)

    @classmethod
    def from_settings(cls, settings: Settings) -> ValueRedactor:
        return cls(secret_values.collect(known_files(settings)))

    def scrub(self, text: str) -> str:
        return self._redactor.redact(text).text
