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

An entry with neither is metadata only: its value is in the vault already, put there by
`muninn secret add ID` (which also appends the entry here, `add_entry`), and `secret load` keeps it.
"""

from __future__ import annotations

import re
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from muninn.core import atomic, yamlfile
from muninn.core.errors import ConfigError

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
        if self.value is not None and self.parts is not None:
            raise ValueError("give one of `value` or `parts`, not both")
        if self.value == "" or (self.parts is not None and (not self.parts or "" in self.parts.values())):
            raise ValueError("empty secret value")
        names = [self.env] if isinstance(self.env, str) else list((self.env or {}).values())
        for name in names:
            if not _ENV.match(name):
                raise ValueError(f"env name {name!r} is not a valid environment variable name")
        if isinstance(self.env, dict) and self.parts is not None and set(self.env) - set(self.parts):
            raise ValueError(f"env names parts that do not exist: {sorted(set(self.env) - set(self.parts))}")
        return self

    @property
    def in_file(self) -> bool:
        """The value is written in the YAML (False: metadata only, the value is in the vault)."""
        return self.value is not None or self.parts is not None

    def values(self) -> dict[str, str]:
        """{part name or '': value}; empty for a metadata-only entry."""
        if self.parts is not None:
            return dict(self.parts)
        return {"": self.value} if self.value is not None else {}

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


def add_entry(path: Path, entry: SecretEntry) -> Located:
    """Append `entry`'s metadata (never a value) to the secrets YAML at `path`, keeping every comment and
    entry as written. The new text is validated before it replaces the file; a layout it cannot append to
    (a flow-style list) is refused by name with nothing written."""
    if entry.in_file:
        raise ValueError("add_entry writes metadata only")
    meta = {k: v for k, v in entry.model_dump(exclude={"value", "parts"}).items() if v not in (None, [], "")}
    block = yaml.safe_dump([meta], sort_keys=False, allow_unicode=True, width=1000)
    text = path.read_text(encoding="utf-8") if path.exists() else HEADER
    if text and not text.endswith("\n"):
        text += "\n"
    # A top-level list takes the block as it is; `secrets:` may indent its items by two.
    for candidate in (text + block, text + "".join(f"  {line}" for line in block.splitlines(keepends=True))):
        found = _entry_in(candidate, path, entry.id)
        if found is not None and found.entry.metadata() == entry.metadata():
            mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o600
            atomic.write_text(path, candidate, mode)
            return Located(found.entry, path, found.line)
    raise ConfigError(f"cannot append an entry to {path}'s layout", path=str(path),
                      fix=f"add `- id: {entry.id}` to it by hand (block style), then rerun")


HEADER = ("# Secrets' metadata. Values are never here: `muninn secret add ID` puts each one in the encrypted "
          "vault.\n")


def _entry_in(text: str, path: Path, secret_id: str) -> Located | None:
    """`secret_id`'s entry in `text` as the real loader reads it (None when it does not read)."""
    with tempfile.TemporaryDirectory(prefix="muninn-secrets-") as tmp:
        scratch = Path(tmp) / path.name
        scratch.write_text(text, encoding="utf-8")
        try:
            entries = load_files([scratch])
        except ConfigError:
            return None
    return next((e for e in entries if e.entry.id == secret_id), None)


def retired_text(path: Path, secret_id: str, when: str) -> str | None:
    """`path`'s text with `secret_id`'s metadata-only entry commented out under a line saying it was
    retired on `when` (`muninn secret retire`): the owner still sees what it was, and no loader reads
    it. None when the file has no entry of that id. Every other entry must read exactly as before,
    or it is refused by name with nothing written (a layout this cannot cut cleanly)."""
    text = path.read_text(encoding="utf-8")
    before = {e.entry.id: e.entry for e in load_files([path])}
    if secret_id not in before:
        return None
    if before[secret_id].in_file:
        raise ValueError("retired_text comments out metadata only: a value would stay in the file")
    span = _entry_lines(text, secret_id)
    if span is not None:
        lines = text.splitlines(keepends=True)
        first, end = span
        indent = " " * (len(lines[first]) - len(lines[first].lstrip()))
        cut = [f"{indent}# retired {when} by `muninn secret retire` (its value stays redacted, never usable):\n",
               *(f"{indent}# {line[len(indent):]}" if line.startswith(indent) else f"# {line}"
                 for line in lines[first:end])]
        candidate = "".join([*lines[:first], *cut, *lines[end:]])
        if not candidate.endswith("\n"):
            candidate += "\n"
        with tempfile.TemporaryDirectory(prefix="muninn-secrets-") as tmp:
            scratch = Path(tmp) / path.name
            scratch.write_text(candidate, encoding="utf-8")
            try:
                after = {e.entry.id: e.entry for e in load_files([scratch])}
            except ConfigError:
                after = None
        if after is not None and after == {k: v for k, v in before.items() if k != secret_id}:
            return candidate
    raise ConfigError(f"cannot cut the entry of {secret_id!r} out of {path}'s layout", path=str(path),
                      fix=f"delete the `- id: {secret_id}` entry by hand (or comment it out), then rerun")


def _entry_lines(text: str, secret_id: str) -> tuple[int, int] | None:
    """The 0-based [first, end) lines of the block-style sequence item whose `id` is `secret_id`."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    seq = root
    if isinstance(root, yaml.MappingNode) and len(root.value) == 1 and root.value[0][0].value == "secrets":
        seq = root.value[0][1]
    if not isinstance(seq, yaml.SequenceNode) or seq.flow_style:
        return None
    for item in seq.value:
        if not isinstance(item, yaml.MappingNode) or item.flow_style:
            continue
        if any(k.value == "id" and getattr(v, "value", None) == secret_id for k, v in item.value):
            return item.start_mark.line, _last_line(item) + 1
    return None


def _last_line(node: yaml.Node) -> int:
    """The last line a node's own text is on: a block collection's end mark is where the next item
    starts, so it is read from its last child."""
    if isinstance(node, yaml.MappingNode | yaml.SequenceNode) and node.value and not node.flow_style:
        last = node.value[-1]
        return _last_line(last[1] if isinstance(last, tuple) else last)
    return node.end_mark.line - (1 if node.end_mark.column == 0 else 0)
