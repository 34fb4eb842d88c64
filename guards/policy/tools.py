"""Tool policy: which tools a profile may see and call. One function decides both, so the list an
agent is shown and the list it may call can never drift apart.

Everything not listed in the profile is denied. An agent profile never gets OpenViking's
dangerous tools, even if a policy file lists them (policy.py refuses to load such a file too:
two independent locks). A check that crashes is a deny.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import ParamSpec

from muninn.core import registry
from muninn.core.policy import AGENT_FORBIDDEN, Access, Profile
from muninn.guards.policy import uri as uri_guard

P = ParamSpec("P")


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str
    canonical_uri: str | None = None

    @property
    def word(self) -> str:
        return "allow" if self.allowed else "deny"


def fail_closed(fn: Callable[P, Decision]) -> Callable[P, Decision]:
    """A guard check that raises is a deny, with the error named, on every transport."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> Decision:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # the one broad except: a crashing guard must not become an allow
            return Decision(False, f"guard check failed ({type(exc).__name__}: {exc}); denied")

    return wrapper


@fail_closed
def check_tool(profile: Profile, tool: str) -> Decision:
    if profile.is_agent and tool in AGENT_FORBIDDEN:
        return Decision(False, f"{tool!r} is never available to agent profiles")
    if tool not in registry.tool_access():
        return Decision(False, f"{tool!r} is not a muninn tool; nothing else passes through the guard")
    if tool not in profile.tools:
        return Decision(False, f"{tool!r} is not in profile {profile.name!r}'s tools")
    return Decision(True, f"{tool!r} is in profile {profile.name!r}'s tools")


@fail_closed
def check_call(profile: Profile, tool: str, uri: str | None = None, access: str | None = None) -> Decision:
    """The whole decision for one call: the tool, then the URI against the read or write prefixes.

    `access` defaults to what the tool does to the tree (its ToolSpec.access); a URI given to a tool
    that touches no tree is checked as a read.
    """
    decision = check_tool(profile, tool)
    if not decision.allowed or uri is None:
        return decision
    wanted: Access = "write" if (access or registry.tool_access().get(tool, "read")) == "write" else "read"
    return check_uri(profile, uri, wanted)


def check_uri(profile: Profile, uri: str, access: Access) -> Decision:
    """Canonicalise `uri`, then ask the policy's one decision (Profile.level_at): the deepest area holding
    the URI decides, so a nested area this profile does not hold refuses it whatever lies above."""
    try:
        canon = uri_guard.canonicalize(uri)
    except uri_guard.UriRejected as exc:
        return Decision(False, exc.reason)
    area = profile.decider(canon)
    if area is None:
        roots = profile.write_prefixes if access == "write" else profile.read_prefixes
        return Decision(False, f"{canon} is outside this profile's {access} areas ({', '.join(roots) or 'nowhere'})",
                        canon)
    if profile.may(access, canon):
        return Decision(True, f"{access} allowed in area {area.name} ({area.uri})", canon)
    held = f"only {area.level}" if area.level else "no access"
    return Decision(False, f"{canon} lies in area {area.name} ({area.uri}), where this profile has {held}", canon)


def visible_tools(profile: Profile, implemented: set[str] | frozenset[str]) -> list[str]:
    """The tools to list for `profile`: allowed by check_tool and actually implemented here."""
    return [t for t in profile.tools if t in implemented and check_tool(profile, t).allowed]
