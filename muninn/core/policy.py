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
        outside: [brain]         # outside memories (muninn.yaml `outside:`) it may query; none by default

Areas may nest (`shared/private` inside `shared`). As on the server, the most specific area decides:
a reader's level at a URI is its level in the deepest area that holds the URI, none when it does not
list that area, whatever it holds above it. Only areas that `policy apply` gives an ACL in the
reader's account decide (those some reader of that account lists); an area nobody there lists has no
ACL on the server and inherits its parent's, so it inherits here too. `Profile.level_at` is the one
decision: the guard, the MCP tools, the keyword indexes and the nightly scans all ask it.

Errors name the file and the line (muninn.core.yamlfile).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar, Literal

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

def agent_default_tools() -> tuple[str, ...]:
    """What an agent profile without `tools:` holds: the registered tools whose ToolSpec says
    `agent_default`, the ones that only read. It is handed a shell's worth of reach (recall_access_exec
    runs commands, recall_verify runs the proof sweep against live systems) or a write into shared memory
    (recall_remember) only by a policy that names the tool. tests/test_guard.py checks each of these
    against the tool's own read-only, closed-world annotations."""
    return tuple(name for name, spec in registry.tools().items() if getattr(spec, "agent_default", False))


_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReaderModel(_Model):
    """One reader: an MCP server profile, a person or an agent, with its own account, user and key."""

    kind: Kind = Field(description="owner (you), assistant (your own sessions: Claude Code, Codex) or agent "
                       "(something that runs on its own). Sets the defaults of `tools` and `trusted`.")
    account: str = Field(min_length=1, description="The OpenViking account the reader's key belongs to; the "
                         "areas' ACLs are set per account.")
    user: str = Field(min_length=1, description="The user in that account; `policy apply` mints its key and "
                      "keeps it in the keyring.")
    areas: dict[str, Level] = Field(default_factory=dict, description="Area name to level: read, write or manage. "
                                    "An area not listed is none; the deepest area holding a URI decides.")
    tools: list[str] | None = Field(None, description="The `recall_*` tools this reader's MCP server offers. "
                                    "Unset: every tool for an owner or assistant, the read-only defaults for an "
                                    "agent (the table below). An agent may never hold OpenViking's own tools "
                                    "that add, delete or share.")
    remember_to: str | None = Field(None, description="The area `recall_remember` writes into: one this reader "
                                    "may write. Required when its tools include recall_remember.")
    trusted: bool | None = Field(None, description="Whether other readers may take what this reader writes as "
                                 "instructions. Unset: false for an agent (its writes are labelled untrusted "
                                 "data), true for an owner or assistant (a person drives those sessions).")
    description: str = Field("", description="Free text for people; muninn does not read it.")
    outside: list[str] = Field(default_factory=list, description="The outside memories (muninn.yaml `outside:`) "
                               "this reader may query; one not named is invisible to it.")


class PolicyModel(_Model):
    """The whole file."""

    reference_page: ClassVar[str] = "docs/policy.md"    # named by an unknown key's error (yamlfile)

    version: Literal[1] = Field(1, description="The file's format; 1 is the only one.")
    areas: dict[str, str] = Field(description="Area name (lowercase letters, digits, - and _) to its folder on "
                                  "the server, viking://resources/<a>/<b>. Areas may nest.")
    readers: dict[str, ReaderModel] = Field(description="Reader name to its reader (the table below).")
    untrusted: list[str] = Field(default_factory=list, description="Areas whose every file is data whoever "
                                 "wrote it (recorded tool output: web pages, other people's text).")


@dataclass(frozen=True)
class Area:
    """One area that decides for a reader: its name, its URI, and the reader's level there (None: none)."""

    name: str
    uri: str
    level: Level | None

    def holds(self, uri: str) -> bool:
        return uri == self.uri or uri.startswith(self.uri + "/")


# A URI the decision can judge by its text: no empty, `.` or `..` segment, no percent-escape or backslash.
# The guard canonicalises what an agent sends first (guards/policy/uri.py); anything else is judged "none".
_PLAIN = re.compile(r"^viking://(?!.*//)(?!.*/\.{1,2}(/|$))[^%\\\x00-\x1f]+(?<!/)$")


@dataclass(frozen=True)
class Profile:
    """One reader as the guard sees it. Prefixes are canonical viking:// URIs: `read_prefixes` and
    `write_prefixes` are the roots to walk and search; whether one URI below them may be read or
    written is `level_at`'s decision, since a nested area can take it away."""

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
    # Every area that decides in this reader's account, the most specific (longest URI) first.
    deciding: tuple[Area, ...] = ()
    # The outside memories it may query, by name: any other is invisible to it (search, status, briefing).
    outside_memories: tuple[str, ...] = ()

    def decider(self, uri: str) -> Area | None:
        """The area that decides at `uri`: the deepest one holding it; None outside every area, and for a
        URI not in plain canonical form (fail closed: canonicalise with guards.uri first)."""
        if not _PLAIN.match(uri):
            return None
        return next((a for a in self.deciding if a.holds(uri)), None)

    def outside(self, uri: str) -> bool:
        """Whether `uri` (plain canonical) lies outside every area that decides in this account."""
        return bool(_PLAIN.match(uri)) and not any(a.holds(uri) for a in self.deciding)

    def level_at(self, uri: str) -> Level | None:
        """This reader's level at `uri`: its level in the area that decides there, else None."""
        area = self.decider(uri)
        return area.level if area is not None else None

    def may(self, access: Access, uri: str) -> bool:
        """Whether this reader may `access` ("read" or "write") `uri`. "none" asks nothing: True."""
        if access == "none":
            return True
        return LEVEL_RANK.get(self.level_at(uri) or "", 0) >= LEVEL_RANK[access]

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
            if not p.trusted and p.may("write", uri):
                out.append(p.name)
        # Recorded tool output (web pages, other people's text) is data even for the reader it came from.
        out += [f"{name} (recorded tool output)" for name in self.untrusted
                if uri == self.areas[name] or uri.startswith(self.areas[name] + "/")]
        return out

    def acl_areas(self, account: str) -> list[str]:
        """The areas `policy apply` gives an ACL in `account`: those some reader of that account lists."""
        return sorted({a for p in self.profiles.values() if p.account == account for a in p.areas})

    def enclosing(self, area: str) -> str | None:
        """The nearest declared area that holds `area`'s URI (its parent area), or None."""
        uri = self.areas[area]
        outer = [(len(u), n) for n, u in self.areas.items() if n != area and uri.startswith(u + "/")]
        return max(outer)[1] if outer else None


# Area URIs must already be in the guard's canonical form (guards/policy/uri.py leaves them unchanged):
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
        same = next((a for a, u in areas.items() if u == areas[name] and a != name), None)
        if same is not None:
            raise doc.error_at(("areas", name), f"area {name!r} has the same URI as {same!r}",
                               fix="one folder is one area: remove one of them or point it elsewhere")
    profiles: dict[str, Profile] = {}
    known = registry.tool_access()  # tool names are checked against what is registered, outside plugins too
    defaults = agent_default_tools()
    for name, r in model.readers.items():
        loc = ("readers", name)
        if not _NAME.match(name):
            raise doc.error_at(loc, "reader names are lowercase letters, digits, - and _")
        for area in r.areas:
            if area not in areas:
                raise doc.error_at((*loc, "areas", area), f"unknown area {area!r}",
                                   fix=f"declare it under `areas:` (known: {', '.join(sorted(areas))})")
        tools = tuple(r.tools) if r.tools is not None else defaults if r.kind == "agent" else tuple(known)
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
            # An agent's writes are untrusted by default: other readers must read them as data. An assistant's
            # are trusted: a person drives those sessions, and the label goes by area, so an untrusted
            # assistant would mark every note it may write as untrusted, the owner's own included.
            trusted=r.trusted if r.trusted is not None else r.kind != "agent",
            outside_memories=tuple(dict.fromkeys(r.outside)),
        )
    for i, name in enumerate(model.untrusted):
        if name not in areas:
            raise doc.error_at(("untrusted", i), f"unknown area {name!r}",
                               fix=f"declare it under `areas:` (known: {', '.join(sorted(areas))})")
    return Policy(path=doc.path, areas=areas, profiles=_with_deciding(areas, model, profiles),
                  untrusted=tuple(model.untrusted))


def _with_deciding(areas: dict[str, str], model: PolicyModel, profiles: dict[str, Profile]) -> dict[str, Profile]:
    """Each profile with the areas that decide in its account, deepest first (see the module's doc)."""
    out = {}
    for name, p in profiles.items():
        listed = {a for r in model.readers.values() if r.account == p.account for a in r.areas}
        deciding = sorted((Area(a, areas[a], p.areas.get(a)) for a in listed), key=lambda a: -len(a.uri))
        out[name] = replace(p, deciding=tuple(deciding))
    return out


def parse(text: str, path: Path | str = "<policy>") -> Policy:
    return _build(yamlfile.parse(text, path))


def load(path: Path | str) -> Policy:
    return _build(yamlfile.load(path))


def path_for(settings: Settings, override: Path | None = None) -> Path:
    """`override`, else `guard.policy` (relative to muninn.yaml), else `<XDG config>/muninn/policy.yaml`."""
    return override.expanduser() if override is not None else settings.paths.policy


def load_for(settings: Settings, override: Path | None = None) -> Policy:
    """The policy these settings point at: the one every part (guard, apply, nightly) enforces. A reader's
    `outside:` must name memories muninn.yaml declares, and no area may share a name with one (`--only`
    takes both)."""
    pol = load(path_for(settings, override))
    declared = [o.name for o in settings.outside]
    for name in declared:
        if name in pol.areas:
            raise ConfigError(f"{name!r} is both an area of policy.yaml and an outside memory of muninn.yaml",
                              path=str(pol.path), fix="rename one: `--only` and `only` take both kinds of name")
    for reader, prof in pol.profiles.items():
        unknown = [n for n in prof.outside_memories if n not in declared]
        if unknown:
            raise ConfigError(f"readers.{reader}.outside: {', '.join(unknown)} is not an outside memory muninn.yaml "
                              f"declares (declared: {', '.join(declared) or 'none'})", path=str(pol.path),
                              fix="declare it under `outside:` in muninn.yaml, or remove it here")
    return pol
