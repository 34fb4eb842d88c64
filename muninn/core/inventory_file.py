"""Inventory YAML: how to reach each cluster, host, cloud account or service from this machine.

A file is a list of entries, or a mapping with an `inventory:` list. No credentials in it, only
references to secret ids. An entry:

    - id: ops-cluster
      kind: cluster
      name: ops-cluster
      aliases: [ops, platform cluster]
      environment: prod
      cloud: aws
      account: aws-ops-prod       # another entry (its own `requires` apply too)
      region: us-east-2
      requires: [vpn]             # prerequisite entries, checked before anything runs
      tags: [eks, kubernetes]
      notes: Platform cluster.
      access:                     # ordered steps (see steps.py for which ones `access exec` runs)
      - source ~/utils/set_aws_ops_prod.sh
      - kubectl --context ops-cluster get nodes
      verify: kubectl --context ops-cluster get nodes
      secrets: []                 # secret ids injected on `access exec`
      global_state: false         # true: verify runs it alone (it changes machine-wide state)

    - id: vpn
      kind: vpn
      tcp: jump01.example.com:22  # the check: a 3-second TCP connect (`verify: nc -z HOST PORT` works too)
      fix: connect the VPN and retry
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from muninn.core import yamlfile
from muninn.core.errors import ConfigError

_NC = re.compile(r"^\s*nc\s+-z(?:v)?\s+(?:-w\s*\d+\s+)?([A-Za-z0-9_.:\[\]-]+)\s+(\d{1,5})\s*$")


class InventoryEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: yamlfile.EntryId
    kind: str
    name: str | None = None
    aliases: list[str] = Field(default_factory=list)
    environment: str | None = None
    cloud: str | None = None
    account: str | None = None
    region: str | None = None
    requires: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    notes: str | None = None
    access: list[str] = Field(default_factory=list)
    verify: str | None = None
    secrets: list[str] = Field(default_factory=list)
    tcp: str | None = None
    fix: str | None = None
    global_state: bool = False

    @field_validator("tcp")
    @classmethod
    def _host_port(cls, value: str | None) -> str | None:
        if value is not None:
            host, _, port = value.rpartition(":")
            if not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError("tcp is host:port, e.g. jump01.example.com:22")
        return value

    @property
    def tcp_target(self) -> str | None:
        """`tcp`, or the host:port of a `verify: nc -z [-w N] HOST PORT` (the same check, written as a command)."""
        if self.tcp:
            return self.tcp
        m = _NC.match(self.verify or "")
        return f"{m.group(1)}:{m.group(2)}" if m else None

    @property
    def address(self) -> tuple[str, int]:
        target = self.tcp_target
        assert target
        host, _, port = target.rpartition(":")
        return host.strip("[]"), int(port)

    @property
    def is_prerequisite(self) -> bool:
        return self.tcp_target is not None

    def fix_sentence(self) -> str:
        if self.fix:
            return self.fix
        if "vpn" in {self.kind.lower(), self.id.lower(), *(a.lower() for a in self.aliases)}:
            return "connect the VPN and retry"
        return f"bring {self.name or self.id} up and retry"


@dataclass
class Located:
    entry: InventoryEntry
    path: Path
    line: int | None


def load_files(paths: Iterable[Path]) -> dict[str, Located]:
    """{id: entry} over all files; ids unique, references (account, requires) resolved. First problem raises."""
    loaded = yamlfile.load_entries(paths, InventoryEntry, "inventory", "id, kind, access...")
    out = {e.value.id: Located(e.value, e.path, e.line) for e in loaded}
    docs = {e.value.id: (e.doc, e.loc) for e in loaded}
    for entry_id, located in out.items():
        doc, loc = docs[entry_id]
        entry = located.entry
        if entry.account and entry.account not in out:
            raise doc.error_at((*loc, "account"), f"account {entry.account!r} is not an inventory entry")
        for i, req in enumerate(entry.requires):
            target = out.get(req)
            if target is None:
                raise doc.error_at((*loc, "requires", i), f"requires {req!r}, which is not an inventory entry")
            if not target.entry.is_prerequisite:
                raise doc.error_at((*loc, "requires", i), f"{req!r} has no `tcp: host:port` check",
                                   fix=f"give {req!r} `tcp:` (or `verify: nc -z HOST PORT`), or drop it from requires")
    _no_account_cycles(out)
    return out


def _no_account_cycles(entries: dict[str, Located]) -> None:
    for start, located in entries.items():
        seen = {start}
        current = located.entry.account
        while current:
            if current in seen:
                raise ConfigError(f"account chain of {start!r} loops back to {current!r}", path=str(located.path),
                                  line=located.line)
            seen.add(current)
            current = entries[current].entry.account
