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
from typing import TYPE_CHECKING, Annotated, Any

from mcp_types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from muninn.core import registry
from muninn.core.errors import ConfigError
from muninn.core.policy import Access

if TYPE_CHECKING:
    from muninn.plugins.mcp.session import GuardSession


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


# The bounded shapes tools share: every string and list an agent sends has a length and a count limit
# (checked for every registered tool by `unbounded`), so no argument makes a call do unbounded work.
URI_MAX = 1000
Uri = Annotated[str, Field(min_length=1, max_length=URI_MAX)]
Name = Annotated[str, Field(min_length=1, max_length=200)]
Tag = Annotated[str, Field(max_length=100)]


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
    # A live tool checks the world as it is now; calling one resets the history-only nudge, and the
    # agents' rules name it as the way to check current state (rules.live_tools).
    live: bool = False
    # Held by an agent profile whose policy lists no `tools:` (policy.agent_default_tools): only tools that
    # read what muninn holds, by their own annotations; a tool with more reach is granted by name.
    agent_default: bool = False
    # Held by the local agent of the policy.yaml `muninn init` writes (init_files.POLICY_YAML).
    init_agent: bool = False

    @property
    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations(read_only_hint=self.read_only, destructive_hint=self.destructive,
                               idempotent_hint=self.idempotent, open_world_hint=self.open_world)

    def input_schema(self) -> dict[str, Any]:
        schema = self.params.model_json_schema()
        schema.pop("title", None)
        return schema


def unbounded(schema: dict[str, Any]) -> list[str]:
    """Where a JSON schema lets an argument grow without limit: a string without maxLength, an array
    without maxItems, a number without a maximum, an open object, or a value of any type. An enum or a
    const is bounded by its choices."""
    defs = schema.get("$defs", {})
    problems: list[str] = []

    def walk(node: Any, where: str, depth: int = 0) -> None:
        if depth > 20 or not isinstance(node, dict):
            problems.append(f"{where}: not a schema this check can read")
            return
        if "$ref" in node:
            walk(defs.get(node["$ref"].rsplit("/", 1)[-1]), where, depth + 1)
            return
        if "enum" in node or "const" in node:
            return
        branches = node.get("anyOf") or node.get("oneOf") or node.get("allOf")
        if branches:
            for branch in branches:
                walk(branch, where, depth + 1)
            return
        kind = node.get("type")
        if kind == "string" and "maxLength" not in node:
            problems.append(f"{where}: a string without max_length")
        elif kind == "array":
            if "maxItems" not in node:
                problems.append(f"{where}: a list without max_length")
            walk(node.get("items"), f"{where}[]", depth + 1)
        elif kind in ("integer", "number") and "maximum" not in node and "exclusiveMaximum" not in node:
            problems.append(f"{where}: a number without le/lt")
        elif kind == "object":
            if node.get("additionalProperties") is not False:
                problems.append(f"{where}: an object open to any key (extra='forbid')")
            for key, sub in node.get("properties", {}).items():
                walk(sub, f"{where}.{key}" if where else key, depth + 1)
        elif kind not in ("string", "boolean", "null", "integer", "number"):
            problems.append(f"{where or 'arguments'}: a value of any type")

    walk(schema, "")
    return problems


# The specs already checked, by name: the guard asks for the tools on every call.
_bounded: dict[str, ToolSpec] = {}


def all_tools() -> dict[str, ToolSpec]:
    """{name: spec} of every registered tool, built-in and outside. A tool whose arguments are not all
    bounded is refused here, before any server lists or calls it."""
    specs = registry.tools()
    for name, spec in specs.items():
        if _bounded.get(name) is spec:
            continue
        if problems := unbounded(spec.input_schema()):
            raise ConfigError(f"tool {name!r} takes unbounded arguments: {'; '.join(problems)}", key=name,
                              fix="give every string and list a max_length and every number a bound")
        _bounded[name] = spec
    return specs
