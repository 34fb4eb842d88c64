"""`muninn policy show`: for every area, in each account, which area decides there and each reader's level.

What it prints is the decision every part enforces (policy.Profile.level_at): the deepest area with an
ACL in the account decides; an area no reader of the account lists gets no ACL from `policy apply` and
inherits its enclosing area's, here as on the server.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from muninn.core.config import Settings
from muninn.core.policy import Policy


@dataclass
class AreaRow:
    account: str
    area: str
    uri: str
    inside: str | None          # the enclosing declared area, if it nests
    decided_by: str | None      # the area whose ACL decides at its URI in this account (None: none does)
    levels: dict[str, str | None]   # reader: its level at the area's URI (None: no access)

    def as_dict(self) -> dict:
        return asdict(self)


def rows(policy: Policy) -> list[AreaRow]:
    out = []
    accounts = sorted({p.account for p in policy.profiles.values()})
    for account in accounts:
        readers = sorted((p for p in policy.profiles.values() if p.account == account), key=lambda p: p.name)
        for area, uri in sorted(policy.areas.items(), key=lambda kv: kv[1]):
            decider = readers[0].decider(uri)
            out.append(AreaRow(account, area, uri, policy.enclosing(area), decider.name if decider else None,
                               {p.name: p.level_at(uri) for p in readers}))
    return out


def describe(row: AreaRow) -> str:
    """What decides at this area, in words."""
    if row.decided_by == row.area:
        return "its own ACL"
    if row.decided_by is None:
        return "no ACL: no reader of this account lists it or an enclosing area"
    return f"no reader of this account lists it: {row.decided_by}'s ACL decides"


@dataclass
class OutsideRow:
    name: str
    kind: str
    trusted: bool
    readers: dict[str, str]     # reader: "query" or "invisible"

    def as_dict(self) -> dict:
        return asdict(self)


def outside_rows(settings: Settings, policy: Policy) -> list[OutsideRow]:
    """Each outside memory muninn.yaml declares and, per reader, whether its `outside:` lets it query it;
    one it does not name is invisible to it in search, status and briefing."""
    readers = sorted(policy.profiles.values(), key=lambda p: p.name)
    return [OutsideRow(o.name, o.kind, o.trusted,
                       {p.name: "query" if o.name in p.outside_memories else "invisible" for p in readers})
            for o in settings.outside]
