"""The vault as the CLI and the MCP server call it. Nothing here returns a value, except `get`,
which refuses unless its caller says it is writing to a real terminal.

    vault = Vault.open(settings)               # who = the OS user (from the uid), or the caller's name
    vault.find("token for jira")              # [metadata...], best first
    vault.show("jira-api-token")              # metadata + use + last verified
    exec_command_line("jira-api-token", ["curl", ...])   # the line an agent runs
    vault.exec("jira-api-token", ["curl", ...])          # run it here, masked
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

from muninn.core.config import Settings
from muninn.core.credentials import Keyring
from muninn.core.errors import ConfigError, MuninnError
from muninn.core.secrets_file import env_names, load_files
from muninn.guards.mask import masking_redactor
from muninn.guards.redact import Redactor
from muninn.guards.secret_values import is_secretish

from . import access_log
from .runner import RunResult, run_masked
from .store import Store, SyncReport

_FIELDS = {"id": 3.0, "service": 3.0, "tags": 2.0, "environment": 2.0, "kind": 2.0, "username": 1.0,
           "url": 1.0, "notes": 1.0, "use": 1.0}


_NOT_SECRET_PARTS = {"user", "username", "login", "email", "account", "host", "url"}


class Refused(MuninnError):
    """muninn will not do this (no terminal for `get`, a guard refused a command)."""

    exit_code = 8


def resolve_files(settings: Settings, files: Sequence[Path]) -> list[Path]:
    """Relative paths in muninn.yaml are relative to muninn.yaml, not to wherever the CLI runs."""
    base = settings.source_file.parent if settings.source_file else Path.cwd()
    return [(p if p.expanduser().is_absolute() else base / p).expanduser() for p in files]


def store_path(settings: Settings) -> Path:
    return (settings.vault.store or settings.workspace / "vault" / "vault.sqlite").expanduser()


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


def score(meta: Mapping, words: list[str], fields: Mapping[str, float] = _FIELDS) -> float:
    total = 0.0
    for word in words:
        best = 0.0
        for name, weight in fields.items():
            value = meta.get(name)
            text = " ".join(value) if isinstance(value, list) else str(value or "")
            if word in text.lower():
                best = max(best, weight * (1.5 if re.search(rf"\b{re.escape(word)}\b", text.lower()) else 1.0))
        total += best
    return total


def query_words(query: str) -> list[str]:
    stop = {"the", "a", "an", "for", "to", "of", "and", "or", "in", "on", "my", "with"}
    return [w for w in re.findall(r"[\w.@:/-]+", query.lower()) if w not in stop]


def expand_references(argv: Sequence[str], names: Mapping[str, str]) -> Sequence[str] | str:
    """argv unchanged, or a bash line when a word names an injected variable (`$JIRA_API_TOKEN`).

    The agent's shell must not expand the variable (it is not set there: `exec_command_line`
    single-quotes it), so the child's shell does, after injection. Only injected names expand;
    every other character stays literal.
    """
    alternatives = "|".join(map(re.escape, names))
    pattern = re.compile(rf"\$(?:({alternatives})\b|\{{({alternatives})\}})") if names else None
    if pattern is None or not any(pattern.search(word) for word in argv):
        return argv
    if len(argv) >= 3 and argv[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh", "dash") and argv[1] == "-c":
        return argv  # that shell expands the variable itself, and the value stays out of its argv
    words = []
    for word in argv:
        if not pattern.search(word):
            words.append(shlex.quote(word))
            continue
        out, pos = ['"'], 0
        for m in pattern.finditer(word):
            out.append(re.sub(r'([\\"`$])', r"\\\1", word[pos:m.start()]))
            out.append("${%s}" % (m.group(1) or m.group(2)))
            pos = m.end()
        out.append(re.sub(r'([\\"`$])', r"\\\1", word[pos:]))
        words.append("".join(out) + '"')
    return " ".join(words)


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
            self._store = Store(store_path(self.settings), Keyring(self.settings.keyring.backend),
                                self.settings.vault.key_name)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    def _log(self, action: str, **fields) -> None:
        # Every stored value that looks like a secret, and the patterns: a query may hold one.
        access_log.write(self.settings.workspace, who=self.who, action=action,
                         scrub=lambda text: access_log.patterns_only(self.redactor().redact(text).text), **fields)

    # --- sync --------------------------------------------------------------------------------
    def sync(self, files: Sequence[Path] | None = None, dry_run: bool = False) -> SyncReport:
        paths = resolve_files(self.settings, files if files is not None else self.settings.vault.files)
        if not paths:
            raise ConfigError("no secrets files to sync", key="vault.files",
                              fix="list them under `vault: {files: [...]}` in muninn.yaml or pass FILE")
        entries = load_files(paths)  # every file validates before the store is touched
        return self.store.sync(entries, dry_run=dry_run)

    # --- metadata ----------------------------------------------------------------------------
    def find(self, query: str, limit: int = 10) -> list[dict]:
        words = query_words(query)
        scored = [(score(m, words), m) for m in self.store.all_metadata()]
        hits = [m | {"score": round(s, 2)} for s, m in sorted(scored, key=lambda x: (-x[0], x[1]["id"])) if s > 0]
        hits = hits[:limit]
        self._log("find", query=query, ids=[h["id"] for h in hits])
        return hits

    def show(self, secret_id: str) -> dict:
        from muninn.plugins.verify.results import last_verified_line

        meta = self.store.metadata(secret_id)
        meta["env_names"] = env_names(meta)
        meta["exec"] = exec_command_line(secret_id, meta.get("use") or "CMD")
        meta["last_verified"] = last_verified_line(self.settings, "secret", secret_id)
        self._log("show", secret_id=secret_id)
        return meta

    # --- values ------------------------------------------------------------------------------
    def redactor(self, injected: str | Collection[str] = ()) -> Redactor:
        """What masking looks for: every part of the injected secret (except user names), and every
        other stored value that looks like a secret. A short or word-like value of another entry
        (`admin`) would mask ordinary output, so only secret-ish ones are added."""
        injected = {injected} if isinstance(injected, str) else set(injected)
        known: dict[str, str] = {}
        for secret_id, part, value in self.store.all_values():
            own = secret_id in injected and part not in _NOT_SECRET_PARTS and len(value) >= 4
            if own or is_secretish(value):
                known[value] = f"{secret_id}.{part}" if part else secret_id
        return masking_redactor(known, self.settings.vault.mask_encodings)

    def injection(self, secret_id: str, env_name: str | None = None) -> dict[str, str]:
        """{VARIABLE: value} for one secret. Callers put it in a child's environment, nowhere else."""
        meta = self.store.metadata(secret_id)
        values = self.store.values(secret_id)
        override: str | dict[str, str] | None = env_name
        if env_name and meta.get("parts"):
            override = dict(pair.split("=", 1) for pair in env_name.split(",")) if "=" in env_name else env_name
        names = env_names(meta, override)
        return {names[part]: value for part, value in values.items()}

    def stdin_value(self, secret_id: str, part: str | None = None) -> bytes:
        values = self.store.values(secret_id)
        if len(values) > 1 and part not in values:
            raise Refused(f"secret {secret_id!r} has parts {sorted(values)}: say which one goes to stdin",
                          fix="add --part NAME")
        return (values[part] if part else next(iter(values.values()))).encode() + b"\n"

    def exec(self, secret_id: str, command: Sequence[str] | str, *, env_name: str | None = None,
             stdin: bool = False, part: str | None = None, stdout: BinaryIO | None = None,
             stderr: BinaryIO | None = None, base_env: Mapping[str, str] | None = None,
             timeout: float | None = None) -> RunResult:
        """Run `command` with the secret in its environment (or on its stdin); output masked."""
        import os

        env = dict(os.environ if base_env is None else base_env)
        stdin_data = None
        if stdin:
            stdin_data = self.stdin_value(secret_id, part)
        else:
            injected = self.injection(secret_id, env_name)
            env.update(injected)
            if not isinstance(command, str):
                command = expand_references(command, injected)
        shown = command if isinstance(command, str) else shlex.join(command)
        redactor = self.redactor(secret_id)
        try:
            result = run_masked(command, redactor=redactor, env=env, stdin_data=stdin_data, timeout=timeout,
                                stdout=stdout or sys.stdout.buffer, stderr=stderr or sys.stderr.buffer)
        except MuninnError:
            self._log("exec", secret_id=secret_id, command=redactor.redact_values(shown).text, exit_code=127)
            raise
        self._log("exec", secret_id=secret_id, command=redactor.redact_values(shown).text, exit_code=result.exit_code,
                  masked=len(result.hits))
        return result

    def get(self, secret_id: str, *, tty: bool, part: str | None = None) -> str:
        """The value itself, for the owner at a terminal. Refuses when output is not a real terminal."""
        if not tty:
            self._log("get", secret_id=secret_id, exit_code=Refused.exit_code, refused="not a terminal")
            raise Refused("`secret get` prints only to a real terminal, and stdout is not one",
                          fix=f"use `muninn secret exec {secret_id} -- CMD` to hand the value to a command")
        values = self.store.values(secret_id)
        if len(values) > 1 and part not in values:
            raise Refused(f"secret {secret_id!r} has parts {sorted(values)}", fix="add --part NAME")
        self._log("get", secret_id=secret_id, exit_code=0)
        return values[part] if part else next(iter(values.values()))
