"""The inventory as the CLI and the MCP server call it.

    inv = Inventory.open(settings)
    inv.find("ops cluster")                  # [entry dicts], best first
    inv.show("ops-cluster")                  # entry dict + `block` (the access block text) + last verified
    inv.exec("ops-cluster", ["kubectl", "get", "pods"])   # prerequisites, steps, command; masked
    access_command_line("ops-cluster", ["kubectl", "get", "pods"])  # the line an agent runs
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import BinaryIO

from muninn.core.config import Settings
from muninn.core.errors import ConfigError, ExitCode, MuninnError
from muninn.core.inventory_file import InventoryEntry, Located, load_files

from . import access_log, catalog, injection, prereq, steps
from .injection import Injection
from .results import last_verified_line
from .runner import RunResult
from .vault import Vault


class UnknownEntry(MuninnError):
    exit_code = ExitCode.BAD_INPUT

    def __init__(self, entry_id: str) -> None:
        super().__init__(f"no inventory entry with id {entry_id!r}",
                         fix="`muninn access find WORDS` lists ids (aliases work too)")


def access_command_line(entry_id: str, command: Sequence[str] | str, muninn: str = "muninn") -> str:
    """`muninn access exec ID -- CMD...`: a string command goes through `bash -c`."""
    argv = ["bash", "-c", command] if isinstance(command, str) else list(command)
    return shlex.join([muninn, "access", "exec", entry_id, "--", *argv])


def block(entry: InventoryEntry, last_verified: str | None = None) -> str:
    """The access block an agent reads: requires, ordered steps, the proof command, linked secrets."""
    what = " · ".join(x for x in (entry.kind, entry.environment) if x)
    lines = [f"Access: {entry.id} ({what})"]
    if entry.name and entry.name != entry.id:
        lines.append(f"  name: {entry.name}")
    if entry.aliases:
        lines.append(f"  aliases: {', '.join(entry.aliases)}")
    for key in ("cloud", "account", "region"):
        if getattr(entry, key):
            lines.append(f"  {key}: {getattr(entry, key)}")
    if entry.requires:
        lines.append(f"  requires: {', '.join(entry.requires)}")
    if entry.is_prerequisite:
        lines.append(f"  check: tcp connect {entry.tcp_target} ({prereq.TIMEOUT:g} s)")
    for n, step in enumerate(steps.classify_all(entry.access), start=1):
        note = {"command": "", "env": "", "switch": "   (context switch)", "note": "   (note)"}[step.kind]
        lines.append(f"  {n}. {step.text}{note}")
    if entry.verify:
        lines.append(f"  verify: {entry.verify}")
    if entry.secrets:
        lines.append(f"  secrets: {', '.join(entry.secrets)}")
    if entry.notes:
        lines.append(f"  notes: {' '.join(entry.notes.split())}")
    if last_verified:
        lines.append(f"  {last_verified}")
    return "\n".join(lines)


def _script(parsed: Sequence[steps.Step], context: str | None, line: str) -> str:
    return steps.script(parsed, steps.with_context(line, context), drop_kube_switch=True)


class Inventory:
    def __init__(self, settings: Settings, entries: Mapping[str, Located], who: str | None = None,
                 scrub: access_log.Scrub | None = None) -> None:
        self.settings = settings
        self.entries = dict(entries)
        self.who = who or access_log.default_who()
        self.scrub = scrub   # for the access log's free text; None: patterns only

    @classmethod
    def open(cls, settings: Settings, who: str | None = None, scrub: access_log.Scrub | None = None) -> Inventory:
        return cls(settings, load_files([settings.paths.resolve(f) for f in settings.inventory.files]), who, scrub)

    def _log(self, action: str, **fields) -> None:
        access_log.write(self.settings.paths.access_log, who=self.who, action=action, scrub=self.scrub, **fields)

    def get(self, entry_id: str) -> InventoryEntry:
        """By id, or by an alias or name when exactly one entry has it."""
        if entry_id in self.entries:
            return self.entries[entry_id].entry
        matches = [loc.entry for loc in self.entries.values()
                   if entry_id in loc.entry.aliases or entry_id == loc.entry.name]
        if len(matches) == 1:
            return matches[0]
        raise UnknownEntry(entry_id)

    def find(self, query: str, limit: int = 10) -> list[dict]:
        records = [loc.entry.model_dump() for loc in self.entries.values()]
        hits = catalog.rank(records, query, catalog.INVENTORY_FIELDS, limit)
        self._log("access-find", query=query, ids=[h["id"] for h in hits])
        return hits

    def show(self, entry_id: str) -> dict:
        entry = self.get(entry_id)
        kind = "prerequisite" if entry.is_prerequisite else "inventory"
        last = last_verified_line(self.settings, kind, entry.id)
        located = self.entries[entry.id]
        self._log("access-show", secret_id=entry.id)
        return entry.model_dump() | {"block": block(entry, last), "last_verified": last,
                                     "requires_all": prereq.required_by(self.entries, entry.id),
                                     "source": f"{located.path}:{located.line}",
                                     "exec": access_command_line(entry.id, ["CMD"])}

    def exec(self, entry_id: str, command: Sequence[str] | str, *, stdout: BinaryIO | None = None,
             stderr: BinaryIO | None = None, vault: Vault | None = None, timeout: float | None = None,
             stdin_secret: str | None = None, part: str | None = None) -> RunResult:
        """Check prerequisites, then run the setup steps and `command` in one bash, secrets injected, masked.
        The child reads /dev/null (the runner's rule): never this process's stdin, the MCP stream under `mcp`;
        with `stdin_secret` (one of the entry's linked secrets) it reads that value instead, for a program that
        prompts for a password (`sudo -S`), as `secret exec --stdin` does."""
        entry = self.get(entry_id)
        if stdin_secret is not None and stdin_secret not in entry.secrets:
            raise ConfigError(f"{stdin_secret!r} is not one of {entry.id}'s linked secrets "
                              f"({', '.join(entry.secrets) or 'none'})", key="--stdin",
                              fix="name one of its `secrets:`, or link it in the inventory first")
        if part is not None and stdin_secret is None:
            raise ConfigError("--part picks the value written to stdin", key="--part", fix="add --stdin SECRET_ID")
        shown = command if isinstance(command, str) else shlex.join(command)
        try:
            prereq.require(self.entries, entry.id)
        except prereq.PrerequisiteDown as down:
            self._log("access-exec", secret_id=entry.id, command=shown, exit_code=down.exit_code,
                      refused=str(down))
            raise
        if entry.secrets or self.settings.paths.vault_store.exists():
            vault = vault or Vault.open(self.settings, who=self.who)
            prepared = vault.secrets.prepare(entry.secrets)
            if stdin_secret is not None:
                prepared = replace(prepared, stdin=vault.secrets.stdin_value(stdin_secret, part))
        else:
            prepared = Injection()  # no vault yet: nothing to inject, nothing known to mask
        parsed = steps.classify_all(entry.access)
        # Like verify: no kubeconfig rewrite (other shells share it); the command gets --context instead.
        context = steps.kube_context(parsed)
        script = partial(_script, parsed, context)
        result = injection.run(command, prepared, wrap=script, timeout=timeout,
                               stdout=stdout or sys.stdout.buffer, stderr=stderr or sys.stderr.buffer)
        self._log("access-exec", secret_id=entry.id, command=prepared.mask(shown),
                  exit_code=result.exit_code, masked=len(result.hits))
        return result
