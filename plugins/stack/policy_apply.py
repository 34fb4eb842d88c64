"""`muninn policy apply` and the ACL drift check: policy.yaml made true on the server, and verified.

OpenViking accepts ACLs only on URIs that already have an index record ("ACL target has no context
record"), so every area folder is created, the queue drained, and only then the ACL set; and a
success message is never trusted: the effective ACL is read back and compared with the policy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime

from muninn.core import accounts, credentials, registry
from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.core.policy import Policy, Profile
from muninn.plugins.stack import lifecycle

Say = Callable[[str], None]


@dataclass
class AreaState:
    account: str
    area: str
    uri: str
    expected: dict[str, str]
    effective: dict[str, str]
    mode: str

    @property
    def ok(self) -> bool:
        return self.mode == "restricted" and self.effective == self.expected

    def describe(self) -> str:
        if self.ok:
            return "ok"
        extra = {p: lv for p, lv in self.effective.items() if self.expected.get(p) != lv}
        missing = {p: lv for p, lv in self.expected.items() if self.effective.get(p) != lv}
        parts = [f"mode {self.mode}"] if self.mode != "restricted" else []
        if extra:
            parts.append("unexpected " + ", ".join(f"{p}={lv}" for p, lv in sorted(extra.items())))
        if missing:
            parts.append("missing " + ", ".join(f"{p}={lv}" for p, lv in sorted(missing.items())))
        return "; ".join(parts)


@dataclass
class ApplyReport:
    users: list[dict] = field(default_factory=list)
    areas: list[AreaState] = field(default_factory=list)
    indexes: dict[str, str] = field(default_factory=dict)   # reader -> what its local copy did

    @property
    def ok(self) -> bool:
        return all(a.ok for a in self.areas)

    def as_dict(self) -> dict:
        return {"ok": self.ok, "users": self.users,
                "areas": [{**asdict(a), "ok": a.ok, "detail": a.describe()} for a in self.areas],
                "indexes": self.indexes}


def _by_account(policy: Policy) -> dict[str, list[Profile]]:
    out: dict[str, list[Profile]] = {}
    for p in policy.profiles.values():
        out.setdefault(p.account, []).append(p)
    # The owner of an account administers it: it is created first and sets the ACLs.
    for profiles in out.values():
        profiles.sort(key=lambda p: (p.kind != "owner", p.name))
    return out


def expected_acl(policy: Policy, account: str, area: str) -> dict[str, str]:
    return {f"user:{p.user}": p.areas[area] for p in policy.profiles.values()
            if p.account == account and area in p.areas}


def _effective(client: OpenViking, uri: str) -> tuple[str, dict[str, str]]:
    acl = client.acl_get(uri)
    return acl.get("acl_mode", "?"), {e["principal"]: e["level"] for e in acl.get("effective_entries", [])}


def _admin(settings: Settings, profiles: list[Profile]) -> OpenViking:
    ring = credentials.for_server(settings)
    admin = profiles[0]
    return OpenViking(settings.server.base_url, ring.require(admin.key_name, fix="run `muninn policy apply`"),
                      key_name=admin.key_name)


def apply(settings: Settings, policy: Policy, say: Say = print) -> ApplyReport:
    """Create accounts and users (idempotently), turn ACLs on, set and verify every area's ACL."""
    report = ApplyReport()
    ring = credentials.for_server(settings)
    root_key = lifecycle.root_key(settings)
    with OpenViking(settings.server.base_url, root_key, key_name=credentials.root_key_name()) as root:
        for account, profiles in _by_account(policy).items():
            for i, p in enumerate(profiles):
                ensured = accounts.ensure_user(root, ring, account, p.user, role="admin" if i == 0 else "user")
                say(f"{account}/{p.user}: {ensured.action}")
                report.users.append({"reader": p.name, **asdict(ensured)})
            # The server's creation time when it lists one; else now, for an account created just now.
            # An account that existed before with no server time gets no record: the check then has
            # nothing to go on, rather than a guess that would refuse true observations.
            created = accounts.server_created_at(root, account)
            if created is None and any(u["account"] == account and u["action"] == "created account"
                                       for u in report.users):
                created = datetime.now(UTC)
            if created is not None:
                accounts.record_created(settings.workspace, account, created)
            root.enable_acl(account)
            with _admin(settings, profiles) as admin:
                areas = sorted({a for p in profiles for a in p.areas})
                for area in areas:
                    uri = policy.areas[area]
                    # Parents too: ensure_dir of a nested area needs them to exist.
                    parts = uri.split("/")
                    for n in range(4, len(parts) + 1):
                        admin.ensure_dir("/".join(parts[:n]))
                admin.wait()
                for area in areas:
                    entries = [{"principal": pr, "level": lv}
                               for pr, lv in sorted(expected_acl(policy, account, area).items())]
                    admin.acl_set(policy.areas[area], entries, mode="restricted")
                admin.wait()
                report.areas += _states(admin, policy, account, areas)
    for a in report.areas:
        say(f"{a.uri}: {a.describe()}")
    # Every reader's local copy follows the policy now, both ways, not at its next session.
    report.indexes = registry.after_policy_apply(settings, policy)
    for reader, what in report.indexes.items():
        say(f"{reader}'s keyword index: {what}")
    return report


def _states(client: OpenViking, policy: Policy, account: str, areas: list[str]) -> list[AreaState]:
    out = []
    for area in areas:
        uri = policy.areas[area]
        mode, effective = _effective(client, uri)
        out.append(AreaState(account, area, uri, expected_acl(policy, account, area), effective, mode))
    return out


def drift(settings: Settings, policy: Policy) -> list[AreaState]:
    """Read-only: every area's effective ACL against the policy."""
    states: list[AreaState] = []
    for account, profiles in _by_account(policy).items():
        with _admin(settings, profiles) as admin:
            states += _states(admin, policy, account, sorted({a for p in profiles for a in p.areas}))
    return states
