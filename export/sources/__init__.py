"""Sources: one module per source, a class with `kind`, an `Options` model and `facts()`.

Built-in sources go through the same door an outside plugin uses: the `register_sources` hook
(muninn.export.plugin lists the built-in classes; an outside package declares an entry point in
the group `muninn`, see muninn.core.hookspecs).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict

from muninn.core import registry
from muninn.core.errors import ConfigError
from muninn.export.facts import Fact


class Options(BaseModel):
    """Base for a source's options (the `options:` mapping of a `sources:` entry)."""

    model_config = ConfigDict(extra="forbid")


class Source(Protocol):
    kind: ClassVar[str]
    help: ClassVar[str]
    Options: ClassVar[type[BaseModel]]

    def __init__(self, path: Path, options: Any) -> None: ...

    def facts(self) -> Iterator[Fact]:
        """Facts in a deterministic order. Bad input raises ConfigError naming file and line."""
        ...

    def secret_files(self) -> list[Path]:
        """Files whose values this source knows to be secret (the secrets source returns its own)."""
        ...

    # Optional: `known_values() -> list[tuple[str, str]]`, (id, value) pairs the source found where
    # secrets live but nobody declared them (a repo's `.env` files). They are redacted everywhere,
    # through the guessed-value filter (export/known_values.py registers them).


def kinds() -> list[str]:
    return sorted(registry.sources())


def get(kind: str) -> type[Source]:
    found = registry.sources()
    if kind not in found:
        raise ConfigError(f"unknown source kind {kind!r}", key="kind", fix=f"use one of: {', '.join(sorted(found))}")
    return found[kind]


def build(kind: str, path: Path, options: dict[str, Any] | None = None,
          validate=None) -> Source:
    """Make a source. `validate(model, data)` lets the caller validate options with line numbers."""
    cls = get(kind)
    data = options or {}
    opts = validate(cls.Options, data) if validate else _plain_validate(cls, data)
    if not Path(path).exists() and not getattr(cls, "absent_is_empty", False):
        raise ConfigError(f"{kind} source not found", path=str(path), fix="check the path")
    return cls(Path(path), opts)


def _plain_validate(cls: type[Source], data: dict[str, Any]) -> BaseModel:
    from pydantic import ValidationError

    try:
        return cls.Options.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ConfigError(f"{err['msg']}", key=".".join(str(p) for p in ("options", *err["loc"]))) from None
