"""Open the vault, inject, expand `$VAR`, run masked: how `secret exec`, `access exec` and the verify
sweep each run a child with secrets. They differ only in which secrets and what wraps the command.

    secrets = Secrets(store, encodings)                      # store None: nothing to inject or mask
    injection = secrets.prepare(["jira-api-token"])           # {VAR: value} + the redactor (+ stdin)
    result = run(["curl", "-H", "Bearer $JIRA_API_TOKEN", URL], injection, stdout=..., stderr=...)
"""

from __future__ import annotations

import os
import re
import shlex
import unicodedata
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import permutations
from typing import BinaryIO

from muninn.core.errors import ConfigError, MuninnError, Refused
from muninn.core.secrets_file import derive_env, env_names
from muninn.guards.known.secret_values import is_declared_secret, is_secretish
from muninn.guards.redact.mask import MaskingRedactor, holds_known, masking_redactor
from muninn.guards.redact.redactor import Redactor

from .runner import RunResult, run_masked
from .store import Store

# Parts of a secret that name who, not what: masking them would hide ordinary output (user names, hosts).
_NOT_SECRET_PARTS = {"user", "username", "login", "email", "account", "host", "url"}
# What a child's environment can hold as a name: anything else fails in exec, after the vault was opened.
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,254}")


def _env_override(secret_id: str, env_name: str, parts: Sequence[str]) -> str | dict[str, str]:
    """`--env` as given: one variable name, or for a multi-part secret a prefix or `part=NAME,part=NAME`."""
    if not parts or "=" not in env_name:
        if not _ENV_NAME.fullmatch(env_name):
            shape = " or part=NAME,part=NAME" if parts else ""
            raise ConfigError(f"{env_name!r} is not an environment variable name (letters, digits and _, "
                              f"not starting with a digit){shape}", key="--env",
                              fix=f"e.g. --env {derive_env(secret_id)}" + (" or --env part=NAME" if parts else ""))
        return env_name
    mapping: dict[str, str] = {}
    for pair in env_name.split(","):
        part, eq, name = pair.partition("=")
        if not eq or part not in parts or not _ENV_NAME.fullmatch(name):
            raise ConfigError(f"{pair!r} is not part=NAME with a part of {secret_id!r} ({', '.join(parts)}) and a "
                              "variable name", key="--env", fix=f"e.g. --env {parts[0]}=NAME")
        mapping[part] = name
    return mapping


def pick_part(secret_id: str, values: Mapping[str, str], part: str | None) -> str:
    """The one value `--part` names (or the only one): every other --part is said, never a KeyError."""
    parts = sorted(p for p in values if p)
    if part is None:
        if len(values) > 1:
            raise Refused(f"secret {secret_id!r} has parts {parts}: say which one", fix="add --part NAME")
        return next(iter(values.values()))
    if not parts:
        raise ConfigError(f"secret {secret_id!r} has one value and no parts, so there is no part {part!r}",
                          key="--part", fix="leave out --part")
    if part not in values:
        raise ConfigError(f"secret {secret_id!r} has no part {part!r} (its parts: {', '.join(parts)})",
                          key="--part", fix=f"e.g. --part {parts[0]}")
    return values[part]


@dataclass
class Injection:
    """What one run gets: variables for the child's environment, the redactor for its output, and
    the bytes for its stdin (`--stdin`). Never printed, never logged."""

    env: dict[str, str] = field(default_factory=dict)
    redactor: Redactor = field(default_factory=lambda: masking_redactor({}))
    stdin: bytes | None = None

    def mask(self, text: str) -> str:
        """`text` with every known value masked: for the access log's command line."""
        return self.redactor.redact_values(text).text


class Secrets:
    """The vault's values, as injection and masking need them. `store` None: a machine with no vault."""

    def __init__(self, store: Store | None, encodings: Sequence[str]) -> None:
        self.store = store
        self.encodings = tuple(encodings)

    def injection(self, secret_id: str, env_name: str | None = None) -> dict[str, str]:
        """{VARIABLE: value} for one secret. Callers put it in a child's environment, nowhere else."""
        store = self._need()
        meta = store.metadata(secret_id)
        values = store.values(secret_id)
        override = _env_override(secret_id, env_name, list(meta.get("parts") or [])) if env_name is not None \
            else None
        names = env_names(meta, override)
        return {names[part]: value for part, value in values.items()}

    def env(self, secret_ids: Collection[str]) -> dict[str, str]:
        """The variables of several secrets at once (an inventory entry's linked secrets)."""
        return {name: value for secret_id in secret_ids for name, value in self.injection(secret_id).items()}

    def stdin_value(self, secret_id: str, part: str | None = None) -> bytes:
        return pick_part(secret_id, self._need().values(secret_id), part).encode() + b"\n"

    def redactor(self, injected: str | Collection[str] = ()) -> Redactor:
        """What masking looks for: every part of the injected secrets (except user names), and every
        other stored value export would redact as declared (`is_declared_secret`: ≥ 6 characters, not
        one ordinary word, so `admin` is left alone), user names of other entries too only when they
        look like a secret. A child may print any entry's value (a config dump), not only its own."""
        injected = {injected} if isinstance(injected, str) else set(injected)
        known: dict[str, str] = {}
        for secret_id, part, value in self.store.all_values() if self.store is not None else ():
            names_who = part in _NOT_SECRET_PARTS
            own = secret_id in injected and not names_who and len(value) >= 4
            if own or is_secretish(value) or (not names_who and is_declared_secret(value)):
                known[value] = f"{secret_id}.{part}" if part else secret_id
        return masking_redactor(known, self.encodings)

    def prepare(self, secret_ids: Collection[str], *, env_name: str | None = None, stdin: bool = False,
                part: str | None = None) -> Injection:
        """One run's injection. `env_name` (a variable name) and `stdin` (the value on the child's stdin
        instead of its env) are for one secret, as `secret exec` takes them."""
        if (stdin or env_name) and len(secret_ids) != 1:
            raise MuninnError("--env and --stdin name one secret's variable or value", fix="pass one secret id")
        if part is not None and not stdin:
            raise ConfigError("--part picks the value written to stdin; without --stdin every part is injected",
                              key="--part", fix="add --stdin, or leave out --part")
        if stdin and env_name is not None:
            raise ConfigError("--stdin writes the value to the command's stdin, so no variable is set",
                              key="--env", fix="leave out --env, or --stdin")
        if stdin:
            (secret_id,) = secret_ids
            return Injection({}, self.redactor(secret_ids), self.stdin_value(secret_id, part))
        env = self.injection(next(iter(secret_ids)), env_name) if env_name else self.env(secret_ids)
        return Injection(env, self.redactor(secret_ids))

    def _need(self) -> Store:
        if self.store is None:
            raise MuninnError("there is no vault store yet", fix="run `muninn vault sync`")
        return self.store


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


# Variables that carry muninn's own secrets: never passed to a child (MUNINN_HOME/MUNINN_CONFIG are, so
# `secret exec -- muninn ...` still finds its workspace).
SECRET_VARIABLES = frozenset({"MUNINN_PASSPHRASE", "MUNINN_OV_ROOT_KEY", "KEYRING_CRYPTFILE_PASSWORD"})
SECRET_PREFIXES = ("KEYRING_PROPERTY_",)      # keyrings.alt reads a backend's settings (its password too) so
# A name that says it holds a password or passphrase (`BACKUP_PASSPHRASE`, `PGPASSWORD`): the caller's own
# secret, held back whatever its value (muninn cannot know a value it never saw). Where one is kept
# (`PASSWORD_STORE_DIR`, `…_FILE`) is not one.
_SECRET_NAME = re.compile(r"PASSPHRASE|PASSWORD|PASSWD", re.I)
_WHERE_NAME = re.compile(r"_(?:DIR|FILE|PATH|HOME|CMD|COMMAND|PROGRAM|LENGTH|POLICY)$", re.I)


def _secret_name(name: str) -> bool:
    return name in SECRET_VARIABLES or name.startswith(SECRET_PREFIXES) \
        or (_SECRET_NAME.search(name) is not None and _WHERE_NAME.search(name) is None)


def child_env(base: Mapping[str, str], injection: Injection) -> dict[str, str]:
    """`base` without secret-named variables (muninn's own, and any named a password or passphrase) and
    without any variable whose name or value holds a known value in any form masking reads (stream views
    included: reversed, case, base32, dumps, …) or a value of muninn's own secret variables; nor any two
    whose values, joined either way, hold one (a value split over two variables). Then the injected ones."""
    own = {value: name for name, value in base.items()
           if (name in SECRET_VARIABLES or name.startswith(SECRET_PREFIXES)) and len(value) >= 6}
    readers = [injection.redactor, *([masking_redactor(own)] if own else [])]

    def holds(text: str) -> bool:
        shown = "".join(c for c in text if unicodedata.category(c) != "Cf")
        return any(holds_known(r, t) for r in readers for t in dict.fromkeys((text, shown)))

    named = {name: value for name, value in base.items() if not _secret_name(name)}
    kept = {name: value for name, value in named.items() if not holds(value) and not holds(name)}
    # Pairs are looked for among every variable, a dropped one too: a piece masked on its own (a value's
    # half, stream_views.parts) still names its other half.
    pieces = [name for name, value in named.items() if any(_is_piece(r, value) for r in readers)]
    split = {n for a, b in permutations(pieces, 2) if holds(named[a] + named[b]) for n in (a, b)}
    return {**{n: v for n, v in kept.items() if n not in split}, **injection.env}


def _is_piece(redactor: Redactor, text: str) -> bool:
    return isinstance(redactor, MaskingRedactor) and redactor.is_piece(text)


def run(command: Sequence[str] | str, injection: Injection, *, stdout: BinaryIO, stderr: BinaryIO,
        wrap: Callable[[str], str] | None = None, base_env: Mapping[str, str] | None = None,
        timeout: float | None = None) -> RunResult:
    """Run `command` with `injection`: variables set, `$VAR` words expanded in the child, output masked.

    `wrap` turns the command line into the script that runs (an inventory entry's setup steps).
    """
    env = child_env(os.environ if base_env is None else base_env, injection)
    if not isinstance(command, str):
        command = expand_references(command, injection.env)
    if wrap is not None:
        command = wrap(command if isinstance(command, str) else shlex.join(command))
    return run_masked(command, redactor=injection.redactor, env=env, stdin_data=injection.stdin, timeout=timeout,
                      stdout=stdout, stderr=stderr)
