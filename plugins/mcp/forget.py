"""`muninn forget URI…`: the owner removes a fact an agent or an assistant wrote (or one remembered
by mistake). It is a shell command only, never an MCP tool: an agent must not be able to erase
history, its own included (policy.AGENT_FORBIDDEN holds OpenViking's `forget` and `rm` for the same
reason).

What may be forgotten is derived from policy.yaml, like everything the guard decides: a file under
an area some non-owner reader may write, or under any reader's `remember_to`. A file muninn
exported (a sync manifest lists it, or it sits in a `sources:` area without the `written_by` that
recall_remember writes) is refused: the next sync would bring it back, so the fix is in the source.
Folders are refused too: a fact is one file, and a folder holds facts nobody looked at.

Every check runs on every URI before anything is removed. Each removal is read back (a file still
there is a failure), dropped from every reader's keyword index (the same `after_sync` hook a
sync's prune uses), and recorded in the MCP audit log: who (the OS user), when, the URI.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from muninn.core import factfile, registry
from muninn.core import policy as policy_mod
from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.core.errors import AuthError, ConfigError, CredentialError, NotFound, Refused, ServerError
from muninn.export.sync import owned_everywhere
from muninn.guards.known import secret_values
from muninn.guards.policy import uri as uri_guard
from muninn.guards.redact.allowlist import Allowlist
from muninn.plugins.access.access_log import default_who
from muninn.plugins.mcp import audit
from muninn.plugins.mcp.redaction import ValueRedactor

TOOL = "forget"


@dataclass
class Target:
    uri: str
    area: str                    # the policy area (write prefix) it lies under
    title: str = ""
    written_by: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"uri": self.uri, "area": self.area, "title": self.title, "written_by": self.written_by}


def forgettable_areas(policy: policy_mod.Policy) -> tuple[str, ...]:
    """Where agents and assistants write: every non-owner reader's write prefixes, and every reader's
    `remember_to` (the owner's own remembered facts included)."""
    out = {p for prof in policy.profiles.values() if prof.kind != "owner" for p in prof.write_prefixes}
    out |= {prof.remember_to for prof in policy.profiles.values() if prof.remember_to}
    return tuple(sorted(out))


def forgettable_at(policy: policy_mod.Policy, canonical: str) -> str | None:
    """The area (its URI) that makes `canonical` forgettable: one where a non-owner reader may write it, or
    a reader's `remember_to` that reader may write it in (policy.Profile.may: a nested area the writer does
    not hold is not where it wrote); None when there is none."""
    for prof in policy.profiles.values():
        mine = prof.kind != "owner" or (prof.remember_to and uri_guard.is_under(canonical, prof.remember_to))
        if mine and prof.may("write", canonical) and (area := prof.decider(canonical)) is not None:
            return area.uri
    return None


def _canonical(uri: str) -> str:
    try:
        return uri_guard.file_uri(uri)
    except uri_guard.FolderUri as exc:
        raise ConfigError(f"{exc.canonical} is a folder: forget removes one fact file at a time",
                          fix=f"list it with `muninn ls {exc.canonical}` and name the files") from None
    except uri_guard.UriRejected as exc:
        raise ConfigError(f"{uri[:120]!r} is not a viking:// URI: {exc.reason}",
                          fix="copy the URI from `muninn search` or `muninn ls`") from None


def _exported_areas(settings: Settings) -> tuple[str, ...]:
    return tuple(sorted({s.area for s in settings.sources}))


def check(settings: Settings, policy: policy_mod.Policy, uris: Iterable[str]) -> list[tuple[str, str]]:
    """(canonical URI, area) for each URI, or the first refusal: every URI is judged before any is removed."""
    areas = forgettable_areas(policy)
    owned = owned_everywhere(settings.paths.sync_manifests)
    out: list[tuple[str, str]] = []
    for raw in uris:
        canonical = _canonical(raw)
        if canonical in owned:
            raise Refused(f"{canonical} was exported by muninn from one of your sources: forgetting it here "
                          "would only last until the next sync",
                          fix="remove it from the source, then run `muninn export all && muninn sync all --prune`")
        area = forgettable_at(policy, canonical)
        if area is None:
            raise Refused(f"{canonical} is not in an area agents or assistants write to "
                          f"({', '.join(areas) or 'none in policy.yaml'}): forget removes only what they wrote",
                          fix="remove exported facts from their source; other files with `muninn leak purge` "
                              "or the server's own tools")
        if canonical == area:
            raise ConfigError(f"{canonical} is a whole area, not a fact",
                              fix=f"list it with `muninn ls {canonical} -r` and name the files")
        out.append((canonical, area))
    return out


def _clients(settings: Settings, policy: policy_mod.Policy, area: str) -> Iterable[tuple[str, OpenViking]]:
    """Keys that may remove a file in `area`, the owner's first: each owner reader, then every
    reader that may write the area (the agent's own key reaches its own area), then the CLI's own."""
    profiles = sorted(policy.profiles.values(), key=lambda p: p.kind != "owner")
    seen: set[tuple[str, str]] = set()
    idents = [(p.name, p.account, p.user) for p in profiles
              if p.kind == "owner" or p.may("write", area)]
    idents.append(("muninn.yaml openviking", settings.openviking.account, settings.openviking.user))
    for label, account, user in idents:
        if (account, user) in seen:
            continue
        seen.add((account, user))
        try:
            client = OpenViking.user(settings, account, user)
        except CredentialError:
            continue
        yield label, client


def describe(client: OpenViking, uri: str, area: str) -> Target:
    """Read the file (it must exist and be a file) for the confirmation and the audit line."""
    try:
        text = client.read(uri)
    except ServerError:
        if client.is_folder(uri):
            raise ConfigError(f"{uri} is a folder: forget removes one fact file at a time",
                              fix=f"list it with `muninn ls {uri}` and name the files") from None
        raise
    meta, body = factfile.split_front_matter(text)
    crumbs = factfile.crumbs(meta.get("breadcrumb"))
    title = crumbs[-1] if crumbs else next((ln.lstrip("# ").strip() for ln in body.splitlines() if ln.strip()), "")
    return Target(uri, area, title=" ".join(title.split())[:120], written_by=str(meta.get("written_by") or ""))


def refuse_exported_file(settings: Settings, target: Target) -> None:
    """A file in a `sources:` area that recall_remember did not write came from an export."""
    if not target.written_by and any(uri_guard.is_under(target.uri, a) for a in _exported_areas(settings)):
        raise Refused(f"{target.uri} lies in an area muninn exports into and no agent wrote it",
                      fix="remove it from the source, then run `muninn export all && muninn sync all --prune`")


def _gone(client: OpenViking, uri: str, tries: int = 10) -> bool:
    for i in range(tries):
        try:
            client.read(uri)
        except NotFound:
            return True
        time.sleep(0.2 * (i + 1))
    return False


def _audit_log(settings: Settings) -> audit.AuditLog:
    # The MCP server's own scrubber for the same log (values, patterns, the owner's allowlist).
    redactor = ValueRedactor(secret_values.known(settings), Allowlist.load(settings.paths.redact_allowlist))
    return audit.AuditLog(settings.paths.audit_log, redactor.scrub_all)


def plan(settings: Settings, uris: Iterable[str]) -> tuple[policy_mod.Policy, list[Target]]:
    """Every URI checked and read; raises on the first that may not be forgotten."""
    path = policy_mod.path_for(settings)
    if not path.exists():
        raise ConfigError("forget needs policy.yaml to know which areas agents write", path=str(path),
                          fix="create it (see examples/policy.yaml) or set guard.policy")
    policy = policy_mod.load(path)
    targets: list[Target] = []
    for uri, area in check(settings, policy, uris):
        target = _with_client(settings, policy, area, lambda c, u=uri, a=area: describe(c, u, a))
        refuse_exported_file(settings, target)
        targets.append(target)
    return policy, targets


def _with_client(settings: Settings, policy: policy_mod.Policy, area: str, call: Callable[[OpenViking], Any]) -> Any:
    denied: list[str] = []
    for label, client in _clients(settings, policy, area):
        with client:
            try:
                return call(client)
            except AuthError:
                denied.append(label)
    raise AuthError(f"no key in the keyring may reach {area} ({', '.join(denied) or 'none found'})",
                    fix="run `muninn policy apply` so the owner's key exists and may manage the area")


def remove(settings: Settings, policy: policy_mod.Policy, targets: list[Target]) -> list[dict[str, Any]]:
    """Remove each target, confirm it is gone, drop it from every keyword index, record it."""
    who = default_who()
    log = _audit_log(settings)
    done: list[dict[str, Any]] = []
    try:
        for target in targets:
            started = time.monotonic()

            def rm(client: OpenViking, t: Target = target) -> bool:
                client.rm(t.uri)
                return _gone(client, t.uri)

            gone = _with_client(settings, policy, target.area, rm)
            registry.after_sync(settings, target.area, {}, [target.uri])
            reason = (f"removed by {who} with muninn forget" + (f" (written by {target.written_by})"
                                                                if target.written_by else ""))
            log.record(profile="owner-cli", who=who, tool=TOOL, arguments={"uri": target.uri},
                       decision="removed" if gone else "error",
                       reason=reason if gone else "still readable after rm",
                       duration_ms=(time.monotonic() - started) * 1e3)
            if not gone:
                raise ServerError(f"{target.uri} is still there after rm", uri=target.uri,
                                  fix="rerun `muninn forget`; if it stays, check the server log")
            done.append(target.to_json() | {"removed": True})
    finally:
        log.close()
    return done

