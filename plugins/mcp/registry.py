"""What a tool is. Each tool is one small module declaring a `ToolSpec`; the built-in tools are
registered by muninn.plugins.mcp.plugin through the `register_tools` hook, the door an outside
plugin uses too (muninn.core.registry).

A tool declares its parameters as a pydantic model (the input schema is generated from it, and
arguments are validated against it before the handler runs), its annotations, and `access`: what
it does to the tree. Which profile may call it, on which URIs, is the policy's and the guard's job.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_types import ToolAnnotations
from pydantic import BaseModel, ConfigDict

from muninn.core import registry
from muninn.core.policy import Access

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
    # What the tool does to the tree ("read", "write" or "none"); the guard checks a URI against it.
    # Names and access are a contract: agents' instructions and audit logs name them.
    access: Access
    read_only: bool = True
    destructive: bool = False
    idempotent: bool = True
    open_world: bool = False
    # A live tool checks the world as it is now; calling one resets the history-only nudge.
    live: bool = False

    @property
    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations(read_only_hint=self.read_only, destructive_hint=self.destructive,
                               idempotent_hint=self.idempotent, open_world_hint=self.open_world)

    def input_schema(self) -> dict[str, Any]:
        schema = self.params.model_json_schema()
        schema.pop("title", None)
        return schema


def all_tools() -> dict[str, ToolSpec]:
    """{name: spec} of every registered tool, built-in and outside."""
    return registry.tools()
