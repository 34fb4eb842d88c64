"""The policy model: who reads and writes which area, and with which tools.

One `policy.yaml` has three uses: `muninn policy apply` turns it into accounts and
ACLs, the MCP guard derives each profile's read prefixes, write prefixes and tools from it, and
the nightly drift check compares the server with it. So everything here is *derived*, never
stated twice: a profile's prefixes come from its area levels, never from a second list.

    areas:
      shared: viking://resources/shared
      raven:  viking://resources/agents/raven
    readers:
      raven:
        kind: agent              # owner | assistant | agent
        account: home
        user: raven
        areas: {shared: read, raven: write}
        remember_to: raven       # where recall_remember writes its observations
        tools: [recall_search, recall_read, recall_remember]

Errors name the file and the line (muninn.core.yamlfile).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from muninn.core import credentials, registry, yamlfile
from muninn.core.config import Settings
from muninn.core.errors import ConfigError

Level = Literal["read", "write", "manage"]
Kind = Literal["owner", "assistant", "agent"]
Access = Literal["read", "write", "none"]
LEVEL_RANK = {"read": 1, "write": 2, "manage": 3}

# OpenViking's own MCP tools that no agent profile may ever hold, whatever policy.yaml says:
# they add content every agent loads (add_resource, add_skill), destroy history (forget, rm),
# change who may read what (set_acl), stop syncs (cancel_watch) or hand out secret values
# (privacy_resolve, privacy_upsert, download).
AGENT_FORBIDDEN = frozenset({
    "add_resource", "add_skill", "forget", "delete", "rm", "set_acl", "cancel_watch",
    "privacy_resolve", "privacy_upsert", "download",
})

# An agent profile without `tools:` gets the tools that only read: it is handed a shell's worth of
# reach (recall_access_exec runs commands, recall_verify runs the proof sweep against live systems)
# or a write into shared memory (recall_remember) only by a policy that names the tool.
# tests/test_guard.py checks each of these against the tool's own read-only, closed-world annotations.
AGENT_DEFAULT_TOOLS: tuple[str, ...] = (
    "recall_search", "recall_read", "recall_list", "recall_secret_find", "recall_secret_show",
    "recall_secret_command", "recall_access_find", "recall_access_show", "recall_status",
)

_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReaderModel(_Model):
    kind: Kind
    account: str = Field(min_length=1)
    user: str = Field(min_length=1)
    areas: dict[str, Level] = Field(default_factory=dict)
    tools: list[str] | None = None
    remember_to: str | None = None
    trusted: bool | None = None
    description: str = ""


class PolicyModel(_Model):
    version: Literal[1] = 1
    areas: dict[str, str]
    readers: dict[str, ReaderModel]
    untrusted: list[str] = Field(default_factory=list)   # areas whose files are all data (recorded tool output)


@dataclass(frozen=True)
class Profile:
    """One reader as the guard sees it. Prefixes are canonical viking:// URIs."""

    name: str
    kind: Kind
    account: str
    user: str
    areas: dict[str, Level]
    read_prefixes: tuple[str, ...]
    write_prefixes: tuple[str, ...]
    tools: tuple[str, ...]
    remember_to: str | None
    trusted: bool

    @property
    def key_name(self) -> str:
        return credentials.user_key_name(self.account, self.user)

    @property
    def is_agent(self) -> bool:
        return self.kind == "agent"


@dataclass(frozen=True)
class Policy:
    path: Path
    areas: dict[str, str]
    profiles: dict[str, Profile]
    untrusted: tuple[str, ...] = ()   # area names whose every file is data, whoever wrote it

    def profile(self, name: str) -> Profile:
        try:
            return self.profiles[name]
        except KeyError:
            known = ", ".join(sorted(self.profiles)) or "none"
            raise ConfigError(f"no reader named {name!r} (known: {known})", path=str(self.path),
                              fix="use one of the readers in policy.yaml, or add it there") from None

    def untrusted_writers(self, uri: str) -> list[str]:
        """Untrusted profiles that may write where `uri` lies: their content is data, not instructions."""
        out = []
        for p in self.profiles.values():
            if not p.trusted and any(uri == w or uri.startswith(w + "/") for w in p.write_prefixes):
                out.append(p.name)
        # Recorded tool output (web pages, other people's text) is data even for the reader it came from.
        out += [f"{name} (recorded tool output)" for name in self.untrusted
                if uri == self.areas[name] or uri.startswith(self.areas[name] + "/")]
        return out


# Area URIs must already be in the guard's canonical form (guards/uri.py leaves them unchanged):
# a policy that needs canonicalising is a policy whose author meant something else.
_AREA_URI = re.compile(r"^viking://resources(/[A-Za-z0-9_-][A-Za-z0-9._-]*(?<!\.))+$")


def _area_uri(doc: yamlfile.Document, loc: tuple, uri: str) -> str:
    if not _AREA_URI.match(uri):
        raise doc.error_at(loc, f"area URI {uri!r} must look like viking://resources/<a>/<b> "
                                "(letters, digits, . - _; no trailing slash or dot, no . or .. segments)")
    return uri


def _build(doc: yamlfile.Document) -> Policy:
    if not isinstance(doc.data, dict):
        raise doc.error_at((), "expected a mapping with `areas:` and `readers:`")
    model = doc.validate(PolicyModel)
    areas: dict[str, str] = {}
    for name, uri in model.areas.items():
        if not _NAME.match(name):
            raise doc.error_at(("areas", name), "area names are lowercase letters, digits, - and _")
        areas[name] = _area_uri(doc, ("areas", name), uri)
    profiles: dict[str, Profile] = {}
    known = registry.tool_access()  # tool names are checked against what is registered, outside plugins too
    for name, r in model.readers.items():
        loc = ("readers", name)
        if not _NAME.match(name):
            raise doc.error_at(loc, "reader names are lowercase letters, digits, - and _")
        for area in r.areas:
            if area not in areas:
                raise doc.error_at((*loc, "areas", area), f"unknown area {area!r}",
                                   fix=f"declare it under `areas:` (known: {', '.join(sorted(areas))})")
        tools = tuple(r.tools) if r.tools is not None else AGENT_DEFAULT_TOOLS if r.kind == "agent" else tuple(known)
        for i, tool in enumerate(tools):
            tloc = (*loc, "tools", i)
            if r.kind == "agent" and tool in AGENT_FORBIDDEN:
                raise doc.error_at(tloc, f"agent readers may never hold {tool!r}",
                                   fix="remove it: the guard refuses it whatever the policy says")
            if tool not in known:
                raise doc.error_at(tloc, f"unknown tool {tool!r} (known: {', '.join(known)})")
        if len(set(tools)) != len(tools):
            raise doc.error_at((*loc, "tools"), "a tool is listed twice")
        ranked = {a: LEVEL_RANK[lv] for a, lv in r.areas.items()}
        reads = tuple(sorted(areas[a] for a, rank in ranked.items() if rank >= 1))
        writes = tuple(sorted(areas[a] for a, rank in ranked.items() if rank >= 2))
        if r.remember_to is not None and ranked.get(r.remember_to, 0) < 2:
            raise doc.error_at((*loc, "remember_to"), f"{r.remember_to!r} is not an area this reader may write")
        if "recall_remember" in tools and r.remember_to is None:
            raise doc.error_at((*loc, "tools"), "recall_remember needs `remember_to: <area>` (its own area)")
        profiles[name] = Profile(
            name=name, kind=r.kind, account=r.account, user=r.user, areas=dict(r.areas),
            read_prefixes=reads, write_prefixes=writes, tools=tools,
            remember_to=areas[r.remember_to] if r.remember_to else None,
            # An agent's writes are untrusted by default: other readers must read them as data.
            trusted=r.trusted if r.trusted is not None else r.kind != "agent",
        )
    for i, name in enumerate(model.untrusted):
        if name not in areas:
            raise doc.error_at(("untrusted", i), f"unknown area {name!r}",
                               fix=f"declare it under `areas:` (known: {', '.join(sorted(areas))})")
    return Policy(path=doc.path, areas=areas, profiles=profiles, untrusted=tuple(model.untrusted))


def parse(text: str, path: Path | str = "<policy>") -> Policy:
    return _build(yamlfile.parse(text, path))


def load(path: Path | str) -> Policy:
    return _build(yamlfile.load(path))


def path_for(settings: Settings, override: Path | None = None) -> Path:
    """`override`, else `guard.policy` (relative to muninn.yaml), else `<XDG config>/muninn/policy.yaml`."""
    return override.expanduser() if override is not None else settings.paths.policy


def load_for(settings: Settings, override: Path | None = None) -> Policy:
    """The policy these settings point at: the one every part (guard, apply, nightly) enforces."""
    return load(path_for(settings, override))
