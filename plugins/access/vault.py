"""The vault as the CLI and the MCP server call it. Nothing here returns a value, except `get`,
which refuses unless its caller says it is writing to a real terminal.

    vault = Vault.open(settings)               # who = the OS user (from the uid), or the caller's name
    vault.find("token for jira")              # [metadata...], best first
    vault.show("jira-api-token")              # metadata + use + last verified
    exec_command_line("jira-api-token", ["curl", ...])   # the line an agent runs
    vault.exec("jira-api-token", ["curl", ...])          # run it here, masked
"""

from __future__ import annotations

import shlex
import stat
import sys
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError

from muninn.core import atomic
from muninn.core.config import Settings
from muninn.core.credentials import for_home
from muninn.core.errors import ConfigError, MuninnError
from muninn.core.inventory_file import load_files as load_inventory
from muninn.core.secrets_file import Located, SecretEntry, add_entry, env_names, load_files, retired_text
from muninn.guards.known.retired import Ledger
from muninn.guards.redact.redactor import Redactor

from . import access_log, catalog, injection
from .injection import Refused, Secrets
from .results import last_verified_line
from .runner import RunResult
from .store import RetiredSecret, Store, SyncReport

__all__ = ["Refused", "Vault", "exec_command_line"]


def exec_command_line(secret_id: str, command: Sequence[str] | str, *, env_name: str | None = None,
                      stdin: bool = False, muninn: str = "muninn") -> str:
    """The one line an agent runs to use a secret: `muninn secret exec ID [--env N] [--stdin] -- CMD...`.

    A string command is passed as `bash -c '...'` so `$JIRA_API_TOKEN` expands in the child, after
    injection, and never in the agent's own shell.
    """
    argv = ["bash", "-c", command] if isinstance(command, str) else list(command)
    head = [muninn, "secret", "exec", secret_id]
    if env_name:
        head += ["--env", env_name]
    if stdin:
        head.append("--stdin")
    return shlex.join([*head, "--", *argv])


class Vault:
    def __init__(self, settings: Settings, who: str | None = None) -> None:
        self.settings = settings
        self.who = who or access_log.default_who()
        self._store: Store | None = None

    @classmethod
    def open(cls, settings: Settings, who: str | None = None) -> Vault:
        return cls(settings, who)

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = Store(self.settings.paths.vault_store, for_home(self.settings),
                                self.settings.vault.key_name)
        return self._store

    @property
    def secrets(self) -> Secrets:
        return Secrets(self.store, self.settings.vault.mask_encodings)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    def _log(self, action: str, **fields) -> None:
        # Every stored value that looks like a secret, and the patterns: a query may hold one.
        access_log.write(self.settings.paths.access_log, who=self.who, action=action,
                         scrub=lambda text: access_log.patterns_only(self.secrets.redactor().redact(text).text),
                         **fields)

    # --- sync --------------------------------------------------------------------------------
    def sync(self, files: Sequence[Path] | None = None, dry_run: bool = False) -> SyncReport:
        paths = [self.settings.paths.resolve(f) for f in (files if files is not None else self.settings.vault.files)]
        if not paths:
            raise ConfigError("no secrets files to sync", key="vault.files",
                              fix="list them under `vault: {files: [...]}` in muninn.yaml or pass FILE")
        entries = load_files(paths)  # every file validates before the store is touched
        if self._store is None and not dry_run:
            # The repair for a damaged store: moved aside, rebuilt from the YAML.
            self._store = Store(self.settings.paths.vault_store, for_home(self.settings),
                                self.settings.vault.key_name, repair=True)
        plan = self.store.sync(entries, dry_run=True)
        if dry_run:
            return plan
        # Values about to be replaced stay findable on the server, as salted hashes, and the store keeps
        # them as retired values, still redacted (a metadata-only entry keeps its value: only its
        # metadata changed).
        kept = {loc.entry.id for loc in entries if not loc.entry.in_file}
        leaving = [*(i for i in plan.changed if i not in kept), *plan.removed]
        Ledger(self.settings.paths.retired_hashes).remember(
            (f"{i}.{p}" if p else i, v) for i in leaving for p, v in self.store.values(i).items())
        report = self.store.sync(entries)
        report.moved_aside = str(self.store.moved_aside) if self.store.moved_aside else None
        return report

    # --- add -------------------------------------------------------------------------------
    def add(self, secret_id: str, value: str, meta: Mapping[str, Any] | None = None,
            replace: bool = False) -> Located:
        """Seal `value` in the store under `secret_id`, and give it a metadata-only entry in the first
        secrets YAML of `vault.files` if no file has one. The value is never written to a file."""
        if not value:
            raise ConfigError("the value is empty", key="value", fix="give the secret's value")
        files = [self.settings.paths.resolve(f) for f in self.settings.vault.files]
        if not files:
            raise ConfigError("no secrets file to hold the entry's metadata", key="vault.files",
                              fix="run `muninn init`, or list a secrets YAML under `vault: {files: [...]}`")
        found = next((e for e in load_files([f for f in files if f.exists()]) if e.entry.id == secret_id), None)
        if found is not None and found.entry.in_file:
            raise ConfigError(f"secret {secret_id!r} has its value written in this file", path=str(found.path),
                              line=found.line, fix="delete its `value:` (or `parts:`) lines and run "
                              "`muninn secret load` (the vault keeps a synced value), or edit the value there")
        if found is not None and meta:
            raise ConfigError(f"secret {secret_id!r} already has an entry", path=str(found.path), line=found.line,
                              fix="edit its metadata there and drop the metadata options")
        if self.store.has(secret_id) and not replace:
            raise Refused(f"secret {secret_id!r} already has a value in the vault",
                          fix="pass --replace to change it; the old value stays redacted, as a retired value")
        if found is None:
            try:
                entry = SecretEntry(id=secret_id, **(meta or {}))
            except ValidationError as exc:
                err = exc.errors()[0]
                raise ConfigError(err["msg"], key=".".join(str(p) for p in err["loc"]) or "ID") from None
            found = add_entry(files[0], entry)
        if self.store.has(secret_id):
            Ledger(self.settings.paths.retired_hashes).remember(
                (f"{secret_id}.{p}" if p else secret_id, v) for p, v in self.store.values(secret_id).items())
        self.store.put(found, {"": value})
        self._log("add", secret_id=secret_id, replaced=replace)
        return found

    # --- retire ------------------------------------------------------------------------------
    def retire(self, secret_id: str) -> Path | None:
        """Take `secret_id` out of use for good. Its value stays known, so it stays redacted: moved among
        the store's retired values (export, the leak gates, the restore gate, MCP output and exec masking
        read those too; `get`, `exec`, `show` and `verify` refuse the id), and remembered in the ledger of
        retired values (salted hashes, guards/known/retired.py: the server leak scan and `leak purge`).
        Its metadata-only entry is commented out in its secrets YAML (returned; None when no file had
        one). A value written in a secrets file is refused: the file would keep it live."""
        if not self.store.has(secret_id):
            raise self.store.missing(secret_id)
        files = [f for f in (self.settings.paths.resolve(p) for p in self.settings.vault.files) if f.exists()]
        found = next((e for e in load_files(files) if e.entry.id == secret_id), None)
        if found is not None and found.entry.in_file:
            raise Refused(f"secret {secret_id!r} has its value written in {found.path} (line {found.line})",
                          fix="delete its entry there and run `muninn secret load`: a value whose entry is gone "
                              "is retired the same way (still redacted, never usable)")
        when = datetime.now(UTC).date().isoformat()
        text = retired_text(found.path, secret_id, when) if found is not None else None
        Ledger(self.settings.paths.retired_hashes).remember(
            (f"{secret_id}.{p}" if p else secret_id, v) for p, v in self.store.values(secret_id).items())
        self.store.retire(secret_id)
        if found is not None and text is not None:
            atomic.write_text(found.path, text, stat.S_IMODE(found.path.stat().st_mode))
        self._log("retire", secret_id=secret_id)
        return found.path if found is not None else None

    # --- metadata ----------------------------------------------------------------------------
    def find(self, query: str, limit: int | None = 10) -> list[dict]:
        """By words, best first (`limit`, default 10); a query with `*`, `?` or `[` is a glob over ids and
        services instead, every match in id order (`*`: every secret)."""
        if catalog.is_glob(query):
            hits = catalog.glob(self.store.all_metadata(), query, ("id", "service"))[:limit]
        else:
            hits = catalog.rank(self.store.all_metadata(), query, catalog.SECRET_FIELDS, limit or 10)
        self._log("find", query=query, ids=[h["id"] for h in hits])
        return hits

    def list_all(self, retired: bool = False) -> list[dict]:
        """Every secret in the vault, metadata only: id, kind, service, environment, its parts' names, its
        entry (file:line), which inventory entries inject it (`used_by`; None when the inventory could
        not be read), and when it was created and last rotated (None: not known, a store made before
        muninn kept dates); `status` "live". `retired`: each retired value too (`status` "retired",
        `retired_at`, `why`: retired, replaced or removed), after the live ones of its id. Never a value."""
        used = _used_by(self.settings)
        dates = self.store.dates()
        out = []
        for meta in self.store.all_metadata():
            sid = meta["id"]
            out.append(_row(meta, used) | {k: dates.get(sid, {}).get(k) for k in ("created_at", "rotated_at",
                                                                                  "updated_at")}
                       | {"status": "live", "retired_at": None, "why": None})
        if retired:
            out += [_row(meta, used) | {"created_at": meta["created_at"], "rotated_at": None, "updated_at": None,
                                        "status": "retired", "retired_at": meta["retired_at"], "why": meta["why"]}
                    for meta in self.store.retired_rows()]
        self._log("list", count=len(out))
        return sorted(out, key=lambda o: (o["id"], o["status"] != "live", o["retired_at"] or ""))

    def retired_count(self) -> int:
        """How many retired values the store keeps (redacted, never usable)."""
        return len(self.store.retired_rows())

    def show(self, secret_id: str) -> dict:
        meta = self.store.metadata(secret_id)
        meta["env_names"] = env_names(meta)
        meta["exec"] = exec_command_line(secret_id, meta.get("use") or "CMD")
        meta["last_verified"] = last_verified_line(self.settings, "secret", secret_id)
        self._log("show", secret_id=secret_id)
        return meta

    # --- values ------------------------------------------------------------------------------
    def redactor(self, injected: str | Collection[str] = ()) -> Redactor:
        return self.secrets.redactor(injected)

    def injection(self, secret_id: str, env_name: str | None = None) -> dict[str, str]:
        return self.secrets.injection(secret_id, env_name)

    def exec(self, secret_id: str, command: Sequence[str] | str, *, env_name: str | None = None,
             stdin: bool = False, part: str | None = None, stdout: BinaryIO | None = None,
             stderr: BinaryIO | None = None, base_env: Mapping[str, str] | None = None,
             timeout: float | None = None) -> RunResult:
        """Run `command` with the secret in its environment (or on its stdin); output masked."""
        self._refuse_retired("exec", secret_id)
        prepared = self.secrets.prepare([secret_id], env_name=env_name, stdin=stdin, part=part)
        shown = prepared.mask(command if isinstance(command, str) else shlex.join(command))
        try:
            result = injection.run(command, prepared, base_env=base_env, timeout=timeout,
                                   stdout=stdout or sys.stdout.buffer, stderr=stderr or sys.stderr.buffer)
        except MuninnError:
            self._log("exec", secret_id=secret_id, command=shown, exit_code=127)
            raise
        self._log("exec", secret_id=secret_id, command=shown, exit_code=result.exit_code, masked=len(result.hits))
        return result

    def get(self, secret_id: str, *, tty: bool, part: str | None = None) -> str:
        """The value itself, for the owner at a terminal. Refuses when output is not a real terminal."""
        self._refuse_retired("get", secret_id)
        if not tty:
            self._log("get", secret_id=secret_id, exit_code=Refused.exit_code, refused="not a terminal")
            raise Refused("`secret get` prints only to a real terminal, and stdout is not one",
                          fix=f"use `muninn secret exec {secret_id} -- CMD` to hand the value to a command")
        value = injection.pick_part(secret_id, self.store.values(secret_id), part)
        self._log("get", secret_id=secret_id, exit_code=0)
        return value


    def _refuse_retired(self, action: str, secret_id: str) -> None:
        """A retired id is refused before anything else is said about it (a terminal, a part), and logged."""
        when = self.store.retired_on(secret_id)
        if when:
            self._log(action, secret_id=secret_id, exit_code=RetiredSecret.exit_code, refused="retired")
            raise RetiredSecret(secret_id, when)


def _row(meta: dict, used: dict[str, list[str]] | None) -> dict:
    sid = meta["id"]
    return {"id": sid, "kind": meta.get("kind"), "service": meta.get("service"),
            "environment": meta.get("environment"), "parts": meta.get("parts") or [],
            "entry": meta.get("source"), "used_by": None if used is None else used.get(sid, [])}


def _used_by(settings: Settings) -> dict[str, list[str]] | None:
    """{secret id: the inventory entries whose `secrets:` name it}; None when the inventory is unreadable
    (`muninn doctor` names the problem; a list of secrets must not fail on it)."""
    try:
        entries = load_inventory([f for f in (settings.paths.resolve(p) for p in settings.inventory.files)
                                  if f.exists()])
    except MuninnError:
        return None
    out: dict[str, list[str]] = {}
    for entry_id, located in sorted(entries.items()):
        for sid in located.entry.secrets:
            out.setdefault(sid, []).append(entry_id)
    return out
