"""Secrets YAML: one fact per secret, metadata only.

The metadata (service, environment, notes, tags, the `use` line) is what makes a credential
findable by an agent; the value never leaves the vault. The file's values are also handed to
the redactor, so a value pasted elsewhere in the notes is caught by value, not only by pattern.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from muninn.export.facts import Fact, slug
from muninn.export.sources import Options, register
from muninn.export.sources._yaml import entries


class SecretEntry(BaseModel):
    # Unknown keys are ignored rather than refused: secrets files carry local extras (check
    # commands, rotation dates) and a typo there must not block the export of everything else.
    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    service: str | None = None
    environment: str | None = None
    kind: str | None = None
    username: str | None = None
    url: str | None = None
    tags: list[str] = Field(default_factory=list)
    notes: str | None = None
    use: str | None = None


class SecretsOptions(Options):
    pass


EXPORTED = ("service", "environment", "kind", "username", "url", "use")


@register
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
        for e in entries(self.path, SecretEntry, "secrets"):
            what = " ".join(p for p in (e.environment, e.service, e.kind or "credential") if p)
            context = (f"Credential metadata for {what}, id {e.id}. The value stays in the vault and is "
                       "only injected into a command that runs with it.")
            lines = [f"# {e.id}", ""]
            lines += [f"- {k}: {getattr(e, k)}" for k in EXPORTED if getattr(e, k)]
            if e.tags:
                lines.append(f"- tags: {', '.join(e.tags)}")
            if e.notes:
                lines += ["", e.notes.strip()]
            yield Fact(
                source=self.kind, kind="secret", key=e.id, title=e.id, body="\n".join(lines), context=context,
                path=slug(e.id, 80), project=e.service, tags=tuple(e.tags),
                breadcrumb=("Secrets", e.service or "other", e.id), source_path=self.path.name,
            )
