"""The source registry: one module per source, each registering itself here.

Built-in sources go through the same door an outside plugin uses: a module calls
`@register` on a class with `kind`, an `Options` model and `facts()`. Outside packages
declare an entry point in the group `muninn.sources` pointing at their module; importing it
registers the class.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict

from muninn.core.errors import ConfigError
from muninn.export.facts import Fact

BUILTIN = ("tasks", "notes", "observations", "secrets", "inventory", "repo")
_REGISTRY: dict[str, type[Source]] = {}
_loaded = False


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


def register(cls: type[Source]) -> type[Source]:
    if cls.kind in _REGISTRY and _REGISTRY[cls.kind] is not cls:
        raise ValueError(f"source kind {cls.kind!r} is registered twice")
    _REGISTRY[cls.kind] = cls
    return cls


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for name in BUILTIN:
        importlib.import_module(f"muninn.export.sources.{name}")
    for ep in entry_points(group="muninn.sources"):
        ep.load()


def kinds() -> list[str]:
    _load()
    return sorted(_REGISTRY)


def get(kind: str) -> type[Source]:
    _load()
    if kind not in _REGISTRY:
        raise ConfigError(f"unknown source kind {kind!r}", key="kind", fix=f"use one of: {', '.join(kinds())}")
    return _REGISTRY[kind]


def build(kind: str, path: Path, options: dict[str, Any] | None = None,
          validate=None) -> Source:
    """Make a source. `validate(model, data)` lets the caller validate options with line numbers."""
    cls = get(kind)
    data = options or {}
    opts = validate(cls.Options, data) if validate else _plain_validate(cls, data)
    if not Path(path).exists():
        raise ConfigError(f"{kind} source not found", path=str(path), fix="check the path")
    return cls(Path(path), opts)


def _plain_validate(cls: type[Source], data: dict[str, Any]) -> BaseModel:
    from pydantic import ValidationError

    try:
        return cls.Options.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ConfigError(f"{err['msg']}", key=".".join(str(p) for p in ("options", *err["loc"]))) from None
