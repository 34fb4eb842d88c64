"""Secrets YAML: the hand-edited source of the vault.

A file is a list of entries, or a mapping with a `secrets:` list. An entry:

    - id: jira-api-token          # unique across all files
      service: jira
      environment: prod
      kind: token
      username: me@example.com
      url: https://jira.example.com
      tags: [atlassian, api]
      notes: Personal bearer token, rotate yearly.
      use: 'curl -H "Authorization: Bearer $JIRA_API_TOKEN" https://jira.example.com/rest/api/2/myself'
      env: JIRA_API_TOKEN         # optional: the variable `secret exec` sets (default: derived from id)
      check: 'curl -sf -H "Authorization: Bearer $JIRA_API_TOKEN" https://jira.example.com/rest/api/2/myself'
      requires: [vpn]             # optional: inventory prerequisites the check needs
      value: <the token>

A multi-part secret has `parts: {username: ..., password: ...}` instead of `value`; each part
is injected as `<ENV>_<PART>` (e.g. DB_ADMIN_PASSWORD) unless `env:` maps part names to
variable names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from muninn.core import yamlfile

_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def derive_env(secret_id: str) -> str:
    """jira-api-token -> JIRA_API_TOKEN; a leading digit gets an underscore (env names cannot start with one)."""
    name = re.sub(r"[^A-Za-z0-9]+", "_", secret_id).strip("_").upper()
    return f"_{name}" if name[:1].isdigit() else name


class SecretEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: yamlfile.EntryId
    service: str | None = None
    environment: str | None = None
    kind: str | None = None
    username: str | None = None
    url: str | None = None
    tags: list[str] = Field(default_factory=list)
    notes: str | None = None
    use: str | None = None
    env: str | dict[str, str] | None = None
    check: str | None = None
    requires: list[str] = Field(default_factory=list)
    value: str | None = None
    parts: dict[str, str] | None = None

    @field_validator("value", mode="before")
    @classmethod
    def _value_scalar(cls, value: object) -> object:
        # YAML reads 0123 or true as numbers/booleans; a secret is the text as written, so ask for quotes.
        if value is not None and not isinstance(value, str):
            raise ValueError("quote the value so YAML keeps it as text")
        return value

    @model_validator(mode="after")
    def _one_value(self) -> SecretEntry:
        if (self.value is None) == (self.parts is None):
            raise ValueError("give exactly one of `value` or `parts`")
        if self.value == "" or (self.parts is not None and (not self.parts or "" in self.parts.values())):
            raise ValueError("empty secret value")
        names = [self.env] if isinstance(self.env, str) else list((self.env or {}).values())
        for name in names:
            if not _ENV.match(name):
                raise ValueError(f"env name {name!r} is not a valid environment variable name")
        if isinstance(self.env, dict) and self.parts is not None and set(self.env) - set(self.parts):
            raise ValueError(f"env names parts that do not exist: {sorted(set(self.env) - set(self.parts))}")
        return self

    def values(self) -> dict[str, str]:
        """{part name or '': value}."""
        return dict(self.parts) if self.parts is not None else {"": self.value or ""}

    def metadata(self) -> dict:
        return self.model_dump(exclude={"value", "parts"}) | {"parts": sorted(self.parts or {})}


def env_names(meta: dict, override: str | dict[str, str] | None = None) -> dict[str, str]:
    """{part or '': environment variable} for an entry's metadata (see `SecretEntry.metadata`)."""
    env = override if override is not None else meta.get("env")
    base = derive_env(meta["id"])
    parts = meta.get("parts") or []
    if not parts:
        return {"": env if isinstance(env, str) else base}
    mapping = env if isinstance(env, dict) else {}
    prefix = env if isinstance(env, str) else base
    return {part: mapping.get(part, f"{prefix}_{derive_env(part)}") for part in parts}


@dataclass
class Located:
    entry: SecretEntry
    path: Path
    line: int | None


def load_files(paths: Iterable[Path]) -> list[Located]:
    """Every entry of every file, validated, ids unique across files. The first problem raises."""
    return [Located(e.value, e.path, e.line)
            for e in yamlfile.load_entries(paths, SecretEntry, "secrets", "id, value...")]
