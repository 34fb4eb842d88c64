"""`muninn verify`: run every inventory proof command and every secret check, read-only.

    items = plan(settings, ids)        # what would run, with the guard's verdict (the dry run)
    results = run(settings, items)     # statuses with reasons, stored for `show`

How the sweep runs, and why:
- Prerequisites (VPN...) are checked once, in parallel, first. A dependant of a down prerequisite
  is `skipped` with the prerequisite's sentence; without the VPN internal services answer 403,
  which would otherwise be misreported as `stale`.
- Every proof command passes the command guard (`guards/command/guard.py`) first; a refusal is
  `skipped` with the guard's reason. The setup steps that run before it are the owner's own env
  scripts (`source`, `export`): commands listed among the steps are never run by the sweep.
- `kubectl config use-context` steps are dropped and the proof gets `--context` instead: parallel
  runs collided on the kubeconfig lock. Entries that keep a machine-wide switch (`az account
  set`, `gcloud config set`) or say `global_state: true` run one at a time in one lane; `az
  account set` in parallel raced and reported the wrong subscription. The lane sets those switches
  back when it ends, under a lock other muninn processes respect (global_state.py).
"""

from __future__ import annotations

import io
import os
import shlex
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace

from muninn.core.config import Settings
from muninn.core.errors import ConfigError
from muninn.core.inventory_file import Located, load_files
from muninn.core.secrets_file import env_names
from muninn.guards.command import guard as command_guard
from muninn.guards.known import secret_values
from muninn.guards.redact.redactor import Redactor
from muninn.plugins.access import sandbox

from . import access_log, global_state, injection, prereq, steps
from .classify import classify
from .injection import Injection, Secrets
from .results import Result, ResultStore, now_iso
from .store import RetiredSecret, VaultDamaged
from .vault import Vault


@dataclass
class Item:
    kind: str                      # inventory | secret | prerequisite
    id: str
    command: str                   # the proof command as it will run
    script: str = ""               # setup steps + command, for bash
    requires: list[str] = field(default_factory=list)
    serial: bool = False
    secrets: list[str] = field(default_factory=list)
    allowed: bool = True
    verdict: str = ""
    dropped: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def _inventory_items(entries: Mapping[str, Located], names: Mapping[str, list[str]]) -> list[Item]:
    items = []
    for entry_id, located in entries.items():
        entry = located.entry
        if entry.is_prerequisite:
            items.append(Item("prerequisite", entry_id, f"tcp connect {entry.tcp_target} ({prereq.TIMEOUT:g} s)",
                              verdict="tcp connect only"))
            continue
        if not entry.verify:
            continue
        parsed = steps.classify_all(entry.access)
        context = steps.kube_context(parsed)
        command = steps.with_context(entry.verify, context)
        verdict = command_guard.check(command, [n for s in entry.secrets for n in names.get(s, [])])
        items.append(Item(
            "inventory", entry_id, command, steps.script(parsed, command, drop_kube_switch=True),
            requires=prereq.required_by(entries, entry_id), secrets=list(entry.secrets),
            serial=entry.global_state or any(steps.is_global_switch(s) for s in parsed),
            allowed=verdict.allowed, verdict=verdict.reason,
            dropped=[s.text for s in parsed if s.context]))
    return items


def _secret_items(metas: list[dict], entries: Mapping[str, Located]) -> list[Item]:
    items = []
    for meta in metas:
        if not meta.get("check"):
            continue
        verdict = command_guard.check(meta["check"], list(env_names(meta).values()))
        unknown = [r for r in meta.get("requires") or [] if r not in entries]
        item = Item("secret", meta["id"], meta["check"], meta["check"], requires=list(meta.get("requires") or []),
                    secrets=[meta["id"]], allowed=verdict.allowed, verdict=verdict.reason)
        if unknown:
            item.allowed, item.verdict = False, f"requires {unknown}, not in the inventory"
            item.requires = [r for r in item.requires if r in entries]
        items.append(item)
    return items


def plan(settings: Settings, ids: Sequence[str] = (), vault: Vault | None = None) -> list[Item]:
    """Every item the sweep would run (or only `ids` and the prerequisites they need)."""
    entries = load_files([settings.paths.resolve(f) for f in settings.inventory.files])
    metas: list[dict] = []
    store = None
    if vault is not None or settings.paths.vault_store.exists():
        store = (vault or Vault.open(settings)).store
        metas = store.all_metadata()
    names = {m["id"]: list(env_names(m).values()) for m in metas}
    items = _inventory_items(entries, names) + _secret_items(metas, entries)
    if ids:
        wanted = set(ids)
        known = {i.id for i in items}
        missing = wanted - known
        for gone in sorted(missing):
            if store is not None and (when := store.retired_on(gone)):
                raise RetiredSecret(gone, when)
        if missing:
            raise ConfigError(f"nothing to verify for {', '.join(sorted(missing))}: no inventory entry with "
                              "`verify`, secret with `check`, or prerequisite has that id",
                              fix="`muninn verify --dry-run` lists the ids")
        needed = {r for i in items if i.id in wanted for r in i.requires}
        items = [i for i in items if i.id in wanted or (i.kind == "prerequisite" and i.id in needed)]
    return items


def _binary(command: str, env: Mapping[str, str]) -> str | None:
    """The first word if it is not on PATH (checked up front: `missing`, not a shell's exit 127)."""
    words = shlex.split(command)
    if words and not shutil.which(words[0], path=env.get("PATH")):
        return words[0]
    return None


def _run_item(item: Item, prepared: Injection, env: Mapping[str, str], timeout: float,
              sandbox_mode: str = "auto") -> Result:
    started = time.monotonic()
    absent = _binary(item.command, {**env, **prepared.env})
    if absent:
        status, reason = "missing", f"{absent} is not installed (not on PATH)"
    else:
        out, err = io.BytesIO(), io.BytesIO()
        # The runner gives the child /dev/null for stdin: under `muninn mcp` ours is the MCP stream itself.
        done = injection.run(sandbox.script(item.script, sandbox_mode), prepared, base_env=env, stdout=out, stderr=err,
                             timeout=timeout)
        text = err.getvalue().decode(errors="replace") + "\n" + out.getvalue().decode(errors="replace")
        status, reason = classify(done.exit_code, text, done.timed_out, timeout, item.command)
    return Result(item.kind, item.id, status, reason, item.command, now_iso(), round(time.monotonic() - started, 3))


def _scrubber(settings: Settings) -> Callable[[str], str]:
    try:
        known = secret_values.known(settings)
    except VaultDamaged:   # its values are unreadable to anyone: the files' values and the patterns remain
        known = secret_values.known(settings, stores=False)
    redactor = Redactor(known)
    return lambda text: redactor.redact(text).text


def run(settings: Settings, items: list[Item], *, parallel: int | None = None, timeout: float | None = None,
        env: Mapping[str, str] | None = None, vault: Vault | None = None, store: bool = True,
        who: str | None = None, progress: Callable[[str], None] | None = None) -> list[Result]:
    """`progress(id)` is called as each item's command finishes (from the worker threads)."""
    parallel = parallel or settings.verify.parallel
    timeout = timeout or settings.verify.timeout
    env = dict(os.environ if env is None else env)
    entries = load_files([settings.paths.resolve(f) for f in settings.inventory.files])
    prereq_ids = [i.id for i in items if i.kind == "prerequisite"]
    statuses = prereq.check_many(entries, prereq_ids)
    results: dict[tuple[str, str], Result] = {}
    commands = {i.id: i.command for i in items if i.kind == "prerequisite"}
    for pid, st in statuses.items():
        results[("prerequisite", pid)] = Result("prerequisite", pid, "ok" if st.up else "unreachable", st.detail,
                                                commands[pid], now_iso())
    runnable: list[Item] = []
    for item in items:
        if item.kind == "prerequisite":
            continue
        down = [r for r in item.requires if r in statuses and not statuses[r].up]
        if down:
            sentence = str(prereq.PrerequisiteDown(entries[down[0]].entry, statuses[down[0]].detail))
            results[(item.kind, item.id)] = Result(item.kind, item.id, "skipped", sentence, item.command, now_iso())
        elif not item.allowed:
            results[(item.kind, item.id)] = Result(item.kind, item.id, "skipped", f"guard refused: {item.verdict}",
                                                   item.command, now_iso())
        else:
            runnable.append(item)
    needs_vault = any(i.secrets for i in runnable) or settings.paths.vault_store.exists()
    if needs_vault and vault is None:
        vault = Vault.open(settings, who=who)
    secrets = vault.secrets if vault is not None else Secrets(None, settings.vault.mask_encodings)
    redactor = secrets.redactor([s for i in runnable for s in i.secrets])
    # Decrypt up front, in this thread: the store's connection is not shared with the workers.
    injected: dict[tuple[str, str], Injection] = {}
    for item in list(runnable):
        try:
            injected[(item.kind, item.id)] = Injection(secrets.env(item.secrets), redactor)
        except RetiredSecret as exc:   # an entry still naming a retired secret: that item only, said
            runnable.remove(item)
            results[(item.kind, item.id)] = Result(item.kind, item.id, "skipped", exc.message, item.command,
                                                   now_iso())
    serial = [i for i in runnable if i.serial]
    free = [i for i in runnable if not i.serial]

    def one(item: Item) -> Result:
        result = _run_item(item, injected[(item.kind, item.id)], env, timeout, settings.verify.sandbox)
        if progress:
            progress(item.id)
        return result

    def lane() -> tuple[list[Result], list[str]]:
        if not serial:
            return [], []
        with global_state.kept([i.script for i in serial], env, settings.paths.global_state_lock) as k:
            done = [one(i) for i in serial]
        return done, k.problems

    with ThreadPoolExecutor(max_workers=parallel) as pool:
        serial_future = pool.submit(lane)
        for item, result in zip(free, pool.map(one, free), strict=True):
            results[(item.kind, item.id)] = result
        lane_results, not_restored = serial_future.result()
        for result in lane_results:
            results[(result.kind, result.id)] = result
    # A reason quotes the command's output (an `ok` its last line): what a proof printed is redacted like
    # every other output, known values and patterns, before it is stored, shown or returned to an agent.
    scrub = _scrubber(settings)
    # A switch the lane could not set back is the owner's shell pointing elsewhere: said, never silent.
    lost = [Result("global-state", p.split(":", 1)[0], "error", f"not set back after the sweep: {p}", p, now_iso())
            for p in not_restored]
    ordered = [replace(r, reason=scrub(r.reason), command=scrub(r.command)) for r in
               [*(results[(i.kind, i.id)] for i in items), *lost]]
    if store:
        rs = ResultStore.open(settings)
        try:
            rs.save(ordered)
        finally:
            rs.close()
    for r in ordered:
        if r.kind == "secret":
            access_log.write(settings.paths.access_log, who=who or access_log.default_who(), action="verify",
                             secret_id=r.id, command=r.command, status=r.status)
    return ordered
