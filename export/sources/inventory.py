"""Inventory YAML: one access card per cluster, host, cloud account or service.

A card answers "how do I get there from this machine": aliases (so "bastion" finds the jump
host), what must be up first, the ordered steps, the one command that proves access, and the
ids of the secrets the steps need. References only: no credential is ever in an inventory.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from muninn.core.inventory_file import load_files
from muninn.export.facts import Fact, slug
from muninn.export.sources import Options


class InventoryOptions(Options):
    pass


class InventorySource:
    kind = "inventory"
    help = "Inventory YAML: one access card per host, cluster, account or service"
    Options = InventoryOptions

    def __init__(self, path: Path, options: InventoryOptions) -> None:
        self.path = path
        self.options = options

    def secret_files(self) -> list[Path]:
        return []

    def facts(self) -> Iterator[Fact]:
        # The inventory plugin's own model: one definition of the format, validated the same way.
        for e in (located.entry for located in load_files([self.path]).values()):
            name = e.name or e.id
            where = ", ".join(p for p in (e.environment, e.cloud, e.region) if p)
            lead = f"How to reach {name} ({e.kind}{', ' + where if where else ''}) from this machine."
            if e.aliases:
                lead += f" Also called: {', '.join(e.aliases)}."
            lines = [f"# Access: {e.id} ({e.kind}{' · ' + e.environment if e.environment else ''})", ""]
            for label, value in (("name", e.name), ("account", e.account), ("cloud", e.cloud),
                                 ("region", e.region)):
                if value:
                    lines.append(f"- {label}: {value}")
            if e.requires:
                lines.append(f"- requires: {', '.join(e.requires)} (check these first)")
            if e.access:
                lines += ["", "Steps:"] + [f"{i}. {step}" for i, step in enumerate(e.access, 1)]
            if e.verify:
                lines += ["", f"Verify: `{e.verify}`"]
            if e.secrets:
                lines += ["", f"Secrets used (ids, values stay in the vault): {', '.join(e.secrets)}"]
            if e.notes:
                lines += ["", e.notes.strip()]
            yield Fact(
                source=self.kind, kind=e.kind, key=e.id, title=name, body="\n".join(lines), lead=lead,
                path=f"{slug(e.kind)}/{slug(e.id, 80)}", project=e.environment,
                tags=tuple(dict.fromkeys([*e.tags, *e.aliases])), breadcrumb=("Inventory", e.kind, e.id),
                source_path=self.path.name, names=tuple(dict.fromkeys(n for n in (e.name, *e.aliases) if n)),
            )
