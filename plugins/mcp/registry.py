"""The tool registry. Each tool is one small module that calls `register(ToolSpec(...))`; the built-in
tools go through the same door an outside plugin would.

A tool declares its parameters as a pydantic model (the input schema is generated from it, and
arguments are validated against it before the handler runs) and its annotations. What a tool may
touch is not declared here: that is the policy's job (muninn.core.policy.TOOLS) and the guard's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_types import ToolAnnotations
from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from muninn.plugins.mcp.session import GuardSession


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass
class Output:
    """What a tool returns: text for the model to read, plus the same facts as structured data."""

    text: str
    data: dict[str, Any] = field(default_factory=dict)


Handler = Callable[["GuardSession", Any], Output]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    params: type[Params]
    handler: Handler
    read_only: bool = True
    destructive: bool = False
    idempotent: bool = True
    open_world: bool = False
    # A live tool checks the world as it is now; calling one resets the history-only nudge.
    live: bool = False
    # Set when a backend this tool needs is absent: the tool is then not listed, and the server
    # says so on stderr and in recall_status (never a silent gap).
    unavailable: str | None = None

    @property
    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations(read_only_hint=self.read_only, destructive_hint=self.destructive,
                               idempotent_hint=self.idempotent, open_world_hint=self.open_world)

    def input_schema(self) -> dict[str, Any]:
        schema = self.params.model_json_schema()
        schema.pop("title", None)
        return schema


REGISTRY: dict[str, ToolSpec] = {}


def register(spec: ToolSpec) -> ToolSpec:
    if spec.name in REGISTRY:
        raise ValueError(f"tool {spec.name!r} registered twice")
    REGISTRY[spec.name] = spec
    return spec


def available() -> dict[str, ToolSpec]:
    from muninn.plugins.mcp import tools  # noqa: F401  (imports register the built-in tools)

    return {name: spec for name, spec in REGISTRY.items() if spec.unavailable is None}


def all_tools() -> dict[str, ToolSpec]:
    from muninn.plugins.mcp import tools  # noqa: F401

    return dict(REGISTRY)
