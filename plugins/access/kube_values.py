"""Known values from the Kubernetes Secrets of the contexts the inventory names, cached sealed.

    warnings = refresh(settings)    # at export: read every reachable context into the cache
    pairs = cached(settings)        # what every redactor and leak gate gets: the cache, never a cluster

How it reads, and why:
- A context is one the inventory names: a `kubectl config use-context C` step, or `--context C` in an
  entry's access steps or proof. Its prerequisites (the VPN) are checked first; behind a down VPN a
  cluster answers nothing useful, and the warning says which prerequisite to bring up.
- Only `kubectl get secrets` and `kubectl get namespaces`, with `-o json`: the argument lists are
  written here, not taken from the inventory (the context is one `--context=` word), so no edit,
  apply or delete is ever run. The command guard is for proof commands someone wrote; it refuses
  `get secrets` with a value-printing output on purpose, and this reader exists to print them.
  First `--all-namespaces`; a user whose RBAC forbids that gets every namespace `get namespaces`
  lists, one by one, and one who may not list namespaces gets the context's own namespace.
- Nobody watches this read, so the entry's setup steps are not run as written: `unattended.plan`
  takes only `export`, `NAME=value`, `unset`, `cd` and `source FILE` lines, rebuilt from their words
  (a sourced file's output goes to stderr, so stdout is kubectl's JSON alone). A global switch (`az
  account set`, `kubectx`) or any other shell line skips the context with a warning naming the line.
- A timeout, a cluster that does not answer or a down prerequisite is a warning, not a failure: the
  context's cached values stay in use, so an export still redacts them while the cluster is away.
  A namespace read replaces its own cached values (a rotated value is picked up, a removed one
  forgotten); one not read this time (forbidden now) keeps them; contexts the inventory no longer
  names are dropped from the cache. A warning's detail is scrubbed of every known value.
- The cache is the vault's own sealed format (`store.Store`, AES-GCM under the vault key in the OS
  keyring), one row per context, 0600. Values never appear in a warning.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from muninn.core.checks import Check
from muninn.core.config import Settings
from muninn.core.credentials import for_home
from muninn.core.errors import ConfigError, MuninnError
from muninn.core.inventory_file import InventoryEntry, Located, load_files
from muninn.guards.known import secret_values
from muninn.guards.redact.redactor import Redactor

from . import kube_secrets, prereq, steps, unattended
from .store import Store, VaultDamaged

ROW = "kube:"
_NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_FORBIDDEN = re.compile(r"\(Forbidden\)|\bforbidden\b", re.IGNORECASE)
_READS = (["get", "secrets"], ["get", "namespaces"])   # the only reads this module makes


class CacheDamaged(VaultDamaged):
    """The cache is truncated or corrupt: handled like a damaged vault (its values cannot be trusted)."""

    def __init__(self, path: Path) -> None:
        MuninnError.__init__(self, f"the known-values cache {path} is unreadable (truncated or corrupt)",
                             fix="delete it and run `muninn export all` while the clusters answer: it is read "
                                 "again from them")


@dataclass(frozen=True)
class Context:
    name: str     # the kubectl context
    entry: str    # the inventory entry that names it


class _Failed(Exception):
    def __init__(self, detail: str, forbidden: bool = False) -> None:
        super().__init__(detail)
        self.detail, self.forbidden = detail, forbidden


def context_of(entry: InventoryEntry) -> str | None:
    """The kubectl context an entry names: its `use-context` step, else a `--context` in a kubectl line."""
    switched = steps.kube_context(steps.classify_all(entry.access))
    if switched:
        return switched
    for line in [*entry.access, entry.verify or ""]:
        try:
            words = shlex.split(line)
        except ValueError:
            continue
        if words[:1] != ["kubectl"]:
            continue
        for i, word in enumerate(words):
            if word == "--context" and i + 1 < len(words):
                return words[i + 1]
            if word.startswith("--context="):
                return word.split("=", 1)[1]
    return None


def contexts(entries: Mapping[str, Located]) -> list[Context]:
    """Each context once, with the first entry that names it (a name that reads as an option is none)."""
    out: dict[str, Context] = {}
    for entry_id, located in entries.items():
        name = context_of(located.entry)
        if name and not name.startswith("-") and name not in out:
            out[name] = Context(name, entry_id)
    return list(out.values())


def _kubectl(setup: unattended.Setup, context: str, args: list[str], timeout: float) -> dict[str, Any]:
    if args[-2:] not in _READS:
        raise ValueError(f"kube_values reads only secrets and namespaces, not {args}")
    argv = ["kubectl", f"--context={context}", f"--request-timeout={timeout:g}s", *args, "-o", "json"]
    env: dict[str, str] | None = None
    cwd: Path | None = None
    if setup.needs_shell:
        command = ["bash", "-c", "exec 3>&1 1>&2\n" + setup.script("exec 1>&3 3>&-\nexec " + shlex.join(argv))]
    else:
        env, cwd, failed = setup.environment(os.environ)
        if failed:
            raise _Failed(f"muninn: access step {failed.n} failed: {failed.text}")
        command = argv
    try:
        proc = subprocess.run(command, capture_output=True, stdin=subprocess.DEVNULL, env=env, cwd=cwd,
                              timeout=timeout + 5, start_new_session=True)
    except subprocess.TimeoutExpired:
        raise _Failed(f"kubectl did not answer within {timeout:g} s") from None
    except FileNotFoundError:
        raise _Failed("kubectl is not on the PATH the entry's setup steps leave") from None
    if proc.returncode != 0:
        lines = [ln.strip() for ln in proc.stderr.decode(errors="replace").splitlines() if ln.strip()]
        last = lines[-1][:200] if lines else f"kubectl exited {proc.returncode}"
        raise _Failed(last, forbidden=bool(_FORBIDDEN.search(last)))
    try:
        return json.loads(proc.stdout)
    except ValueError:
        raise _Failed("kubectl printed something other than JSON") from None


@dataclass
class Read:
    values: dict[str, str]              # {id: value} of what was read now
    keep: Callable[[str], bool]         # whether a cached value of this namespace stays (it was not read now)
    notes: list[str]


def read(ctx: Context, setup: unattended.Setup, timeout: float) -> Read:
    """Every Secret the context may read, which cached namespaces this read did not cover, and notes on
    what it may not read."""
    try:
        return Read(dict(kube_secrets.values(_kubectl(setup, ctx.name, ["--all-namespaces", "get", "secrets"],
                                                      timeout), ctx.name)), lambda ns: False, [])
    except _Failed as exc:
        if not exc.forbidden:
            raise
    try:
        doc = _kubectl(setup, ctx.name, ["get", "namespaces"], timeout)
        namespaces: list[str | None] = [
            item["metadata"]["name"] for item in doc.get("items", [])
            if item.get("kind") == "Namespace" and _NAMESPACE.fullmatch(str(item.get("metadata", {}).get("name")))]
    except _Failed as exc:
        if not exc.forbidden:
            raise
        namespaces = [None]   # the context's own namespace
    values: dict[str, str] = {}
    forbidden: set[str] = set()
    for ns in namespaces:
        try:
            doc = _kubectl(setup, ctx.name, [*([f"--namespace={ns}"] if ns else []), "get", "secrets"], timeout)
        except _Failed as exc:
            if not exc.forbidden:
                raise
            forbidden.add(ns or "")
            continue
        values.update(kube_secrets.values(doc, ctx.name))
    notes = [f"kubernetes context {ctx.name}: the Secrets of {len(forbidden)} namespace(s) are forbidden to this "
             "user and were not read (their cached values stay in use)"] if forbidden else []
    if namespaces == [None]:
        # Its own namespace is known only by the Secrets it holds: every other cached namespace stays.
        seen = {_namespace(sid, ctx.name) for sid in values}
        return Read(values, lambda ns: ns not in seen, notes)
    return Read(values, lambda ns: ns in forbidden, notes)


def _namespace(value_id: str, context: str) -> str:
    """The namespace of an id `kube:<context>/<namespace>/<secret>.<key>` (a context may hold `/`)."""
    return value_id.removeprefix(f"kube:{context}/").partition("/")[0]


def merged(old: Mapping[str, str], fresh: Read, context: str) -> dict[str, str]:
    """The context's new row: what was read now, and the cached values of namespaces it did not cover."""
    return {k: v for k, v in old.items() if fresh.keep(_namespace(k, context))} | fresh.values


def _store(settings: Settings, *, repair: bool = False) -> Store:
    path = settings.paths.known_values_cache
    try:
        return Store(path, for_home(settings), settings.vault.key_name, repair=repair)
    except VaultDamaged:
        raise CacheDamaged(path) from None


class _Scrubber:
    """Every known value (vault, secrets files, `.env` files, this cache) and the patterns, out of a line
    about to be said; gathered once, at the first line. Known values that cannot be gathered withhold it."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.redactor: Redactor | None = None
        self.failed = False

    def __call__(self, text: str) -> str:
        if self.redactor is None and not self.failed:
            try:
                self.redactor = Redactor(secret_values.known(self.settings))
            except MuninnError:
                self.failed = True
        if self.redactor is None:
            return "its text withheld: the known values to scrub it with could not be read"
        return self.redactor.redact(text).text


def refresh(settings: Settings) -> list[str]:
    """Read every named context whose prerequisites are up into the cache; a warning for each that is not."""
    if not settings.known_values.kubernetes or not settings.inventory.files:
        return []
    entries = load_files([settings.paths.resolve(f) for f in settings.inventory.files])
    named = contexts(entries)
    if not named:
        return []
    if shutil.which("kubectl") is None:
        return [f"kubectl is not on PATH: the Secrets of {len(named)} context(s) were not read (cached values "
                "stay in use); install kubectl or set `known_values.kubernetes: false`"]
    warnings: list[str] = []
    store = _store(settings, repair=True)
    if store.moved_aside is not None:
        warnings.append(f"the known-values cache was unreadable and is moved aside to {store.moved_aside}; "
                        "contexts that do not answer now have no cached values")
    if store.narrowed is not None:
        warnings.append(store.narrowed)
    scrub = _Scrubber(settings)
    try:
        read_at = store.updated()
        for ctx in named:
            since = read_at.get(ROW + ctx.name)
            kept = f"its values cached {since[:10]} stay in use" if since else "none of its values are cached yet"
            setup = unattended.plan(entries[ctx.entry].entry.access)
            if isinstance(setup, unattended.Refused):
                warnings.append(f"kubernetes context {ctx.name}: access step {setup.n} of {ctx.entry} is not run "
                                f"unattended ({setup.why}): `{scrub(setup.text)}`; {kept}; {unattended.FIX}")
                continue
            down = [s for s in prereq.check_many(entries, prereq.required_by(entries, ctx.entry)).values() if not s.up]
            if down:
                warnings.append(f"kubernetes context {ctx.name}: prerequisite '{down[0].id}' is down "
                                f"({entries[down[0].id].entry.fix_sentence()}); {kept}")
                continue
            try:
                fresh = read(ctx, setup, settings.known_values.kube_timeout)
            except _Failed as exc:
                # The detail is a line of stderr, which the owner's setup steps share with kubectl.
                warnings.append(f"kubernetes context {ctx.name} did not answer ({scrub(exc.detail)}); {kept}")
                continue
            warnings += fresh.notes
            old = store.values(ROW + ctx.name) if since else {}
            store.put_values(ROW + ctx.name, merged(old, fresh, ctx.name), f"inventory:{ctx.entry}")
        for gone in set(read_at) - {ROW + c.name for c in named}:
            store.delete(gone)
    finally:
        store.close()
    return warnings


def cached(settings: Settings) -> list[tuple[str, str]]:
    """(id, value) of every cached Secret value; none before the first read. Never reaches a cluster."""
    if not settings.known_values.kubernetes or not settings.paths.known_values_cache.exists():
        return []
    store = _store(settings)
    try:
        return [(part or sid, value) for sid, part, value in store.all_values()]
    finally:
        store.close()


def doctor(settings: Settings) -> list[Check]:
    """How old each named context's cached values are (no value is decrypted)."""
    if not settings.known_values.kubernetes or not settings.inventory.files:
        return []
    try:
        named = contexts(load_files([settings.paths.resolve(f) for f in settings.inventory.files]))
    except ConfigError:
        return []   # the inventory's own line says what is wrong with it
    if not named:
        return []
    fix = "run `muninn export all` while the cluster answers (its prerequisites up)"
    if not settings.paths.known_values_cache.exists():
        return [Check("kubernetes known values", "warn", f"{len(named)} context(s), none read yet", fix)]
    store = _store(settings)
    try:
        read_at = store.updated()
    finally:
        store.close()
    limit = settings.known_values.max_age_days
    now = datetime.now(UTC)
    old = []
    for ctx in named:
        since = read_at.get(ROW + ctx.name)
        age = (now - datetime.fromisoformat(since)).days if since else None
        if age is None or age > limit:
            old.append(f"{ctx.name} ({'never read' if age is None else f'{age} days old'})")
    if old:
        return [Check("kubernetes known values", "warn", f"cache older than {limit} days (known_values."
                      f"max_age_days): {', '.join(old)}", fix)]
    return [Check("kubernetes known values", "ok", f"{len(named)} context(s) cached within {limit} days")]
