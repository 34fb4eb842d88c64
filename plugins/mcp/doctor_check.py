"""`muninn doctor`: does policy.yaml load, does each reader have its key, is the audit log writable, and
can some reader reach every area a source exports into?"""

from __future__ import annotations

import os
import shlex

from muninn.core import credentials
from muninn.core import policy as policy_mod
from muninn.core.checks import Check
from muninn.core.config import Settings
from muninn.core.errors import ConfigError, CredentialError


def guard_policy(settings: Settings) -> list[Check]:
    path = policy_mod.path_for(settings)
    if not path.exists():
        return [Check("guard policy", "warn", f"{path} missing: `muninn mcp` cannot start",
                             "copy examples/policy.yaml there (or set guard.policy in muninn.yaml) and edit it")]
    try:
        pol = policy_mod.load(path)
    except ConfigError as exc:
        return [Check("guard policy", "fail", str(exc), "fix the line named")]
    out = [Check("guard policy", "ok", f"{path}: {len(pol.profiles)} readers, {len(pol.areas)} areas")]
    try:
        ring = credentials.for_server(settings)
        missing = [p.name for p in pol.profiles.values() if not ring.get(p.key_name)]
    except CredentialError as exc:
        return [*out, Check("guard keys", "fail", exc.message, exc.fix or "")]
    if missing:
        out.append(Check("guard keys", "warn", f"no key in the keyring for {', '.join(missing)}: `muninn mcp "
                         f"--profile {missing[0]}` exits at start until it has one",
                         "run `muninn up` (it applies policy.yaml) or `muninn policy apply`"))
    else:
        out.append(Check("guard keys", "ok", "every reader's key is in the keyring (names only checked)"))
    log = settings.paths.audit_log
    parent = next((p for p in (log, *log.parents) if p.exists()), None)
    writable = parent is not None and os.access(parent, os.W_OK)
    out.append(Check("guard audit log", "ok" if writable else "fail", str(log),
                            "" if writable else "make its folder writable or set guard.audit_log"))
    return out


def source_reach(settings: Settings) -> list[Check]:
    """A source whose area no reader of the policy may read exports and syncs fine while every agent is
    refused there (issue #51 §4): one warning each, with the one command that adds the area."""
    path = policy_mod.path_for(settings)
    if not settings.sources or not path.exists():
        return []
    try:
        pol = policy_mod.load(path)
    except ConfigError:
        return []    # guard_policy names the line
    out = []
    for src in settings.sources:
        uri = src.area if src.name == "." else f"{src.area}/{src.name or src.kind}"
        if not any(p.may("read", uri) for p in pol.profiles.values()):
            folder = shlex.quote(str(settings.paths.resolve(src.path)))
            kind = "" if src.kind == "notes" else f" --kind {shlex.quote(src.kind)}"
            out.append(Check(f"reach {src.kind} {src.area}", "warn",
                             f"no reader of {path} may read {uri}: it is exported, but every reader, each "
                             "agent included, is refused there",
                             f"run `muninn source add {folder}{kind}` (adds its area to the policy and applies it)"))
    if not out:
        out.append(Check("source reach", "ok", f"every source's area is read by some reader of {path.name}"))
    return out
