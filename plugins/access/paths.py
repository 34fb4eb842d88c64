"""Where the access files are: the YAML files named in muninn.yaml, and the vault store."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from muninn.core.config import Settings


def resolve_files(settings: Settings, files: Sequence[Path]) -> list[Path]:
    """Relative paths in muninn.yaml are relative to muninn.yaml, not to wherever the CLI runs."""
    base = settings.source_file.parent if settings.source_file else Path.cwd()
    return [(p if p.expanduser().is_absolute() else base / p).expanduser() for p in files]


def store_path(settings: Settings) -> Path:
    return (settings.vault.store or settings.workspace / "vault" / "vault.sqlite").expanduser()


def retired_path(settings: Settings) -> Path:
    """Salted hashes of every value the vault ever held (`guards/retired.py`), next to the store."""
    return store_path(settings).with_name("retired-hashes.json")
