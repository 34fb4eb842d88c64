"""Secrets YAML: one fact per secret, metadata only.

The metadata (service, environment, notes, tags, the `use` line) is what makes a credential
findable by an agent; the value never leaves the vault. The file's values are also handed to
the redactor, so a value pasted elsewhere in the notes is caught by value, not only by pattern.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from muninn.core.secrets_file import load_files
from muninn.export.facts import Fact, slug
from muninn.export.sources import Options


class SecretsOptions(Options):
    pass


EXPORTED = ("service", "environment", "kind", "username", "url", "use")


class SecretsSource:
    kind = "secrets"
    help = "Secrets YAML: one fact per secret with its metadata, never the value"
    Options = SecretsOptions

    def __init__(self, path: Path, options: SecretsOptions) -> None:
        self.path = path
        self.options = options

    def secret_files(self) -> list[Path]:
        return [self.path]

    def facts(self) -> Iterator[Fact]:
        # The vault's own model: one definition of the format, validated the same strict way.
        for e in (located.entry for located in load_files([self.path])):
            what = " ".join(p for p in (e.environment, e.service, e.kind or "credential") if p)
            lead = (f"Credential metadata for {what}, id {e.id}. The value stays in the vault and is "
                       "only injected into a command that runs with it.")
            lines = [f"# {e.id}", ""]
            lines += [f"- {k}: {getattr(e, k)}" for k in EXPORTED if getattr(e, k)]
            if e.tags:
                lines.append(f"- tags: {', '.join(e.tags)}")
            if e.notes:
                lines += ["", e.notes.strip()]
            yield Fact(
                source=self.kind, kind="secret", key=e.id, title=e.id, body="\n".join(lines), lead=lead,
                path=slug(e.id, 80), project=e.service, tags=tuple(e.tags),
                breadcrumb=("Secrets", e.service or "other", e.id), source_path=self.path.name,
            )
