"""The one registry: every source, redaction rule, search stage and fusion feature, MCP tool, CLI
command group, doctor check, nightly job, workspace upgrade step, store of known secret values and
after-sync hook comes through here, in llm's style (pluggy hooks; see muninn.core.hookspecs). Each
kind of built-in is listed once, in its part's plugin module (the comments of BUILTIN say which).

`BUILTIN` is the one list of muninn's own plugin modules. They are named, not imported, so core
stays at the bottom of the import order. A plugin module keeps its top-level imports light and
imports what it registers inside the hook where that is heavy (rules, tools), so whether a check or
a hook runs never depends on which CLI module was imported. Never to break a loop: the layout test
counts those imports too (tests/test_layout.py). Outside plugins
come in by the `muninn` entry-point group.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pluggy

from muninn.core import hookspecs
from muninn.core.config import Settings

BUILTIN = (
    "muninn.commands",               # CLI command groups (named, not imported)
    "muninn.core.embed_record",      # the embedding model's record: its upgrade step
    "muninn.guards.plugin",          # redaction rules
    "muninn.export.plugin",          # sources
    "muninn.plugins.stack.doctor",         # packages, config, keyring, server, stack, embedding model
    "muninn.plugins.search.plugin",  # stages, features; reranker and keyword-index checks; index after sync
    "muninn.plugins.access.plugin",  # vault, inventory and verify checks
    "muninn.plugins.mcp.plugin",     # tools; guard policy check
    "muninn.nightly.plugin",         # nightly jobs
    "muninn.plugins.stack.keyring_scope",  # keyring names scoped by server and home: the upgrade step
    "muninn.plugins.stack.home_modes",     # files under the home 0600, folders 0700: check and upgrade step
)

_pm: pluggy.PluginManager | None = None
# What each register_* hook gave, kept until a plugin is added or removed: the guard asks for the
# tool names on every call.
_cache: dict[str, Any] = {}
# search --batch's threads and serve's may ask first at once: one of them gathers, the others wait.
_lock = threading.RLock()


def manager() -> pluggy.PluginManager:
    with _lock:
        return _pm or _new_manager()


def _new_manager() -> pluggy.PluginManager:
    global _pm
    if _pm is None:
        pm = pluggy.PluginManager("muninn")
        pm.add_hookspecs(hookspecs)
        for name in BUILTIN:
            pm.register(importlib.import_module(name), name=name)
        pm.load_setuptools_entrypoints("muninn")
        _pm = pm
    return _pm


def add(plugin: object, name: str | None = None) -> None:
    """Register a plugin object or module at run time (tests, embedding muninn in another program)."""
    manager().register(plugin, name=name)
    _cache.clear()


def remove(plugin: object) -> None:
    manager().unregister(plugin)
    _cache.clear()


def _collect(hook: str, key: Callable[[Any], str], what: str) -> dict[str, Any]:
    with _lock:
        if hook not in _cache:
            _cache[hook] = _gather(hook, key, what)
        return dict(_cache[hook])


def _gather(hook: str, key: Callable[[Any], str], what: str) -> dict[str, Any]:
    out: dict[str, Any] = {}

    def register(*args: Any) -> None:
        item = args[0] if len(args) == 1 else args
        name = key(item)
        if name in out and out[name] != item:
            raise ValueError(f"{what} {name!r} is registered twice")
        out[name] = item

    _call(hook, register)
    return out


def _call(hook: str, register: Callable[..., None]) -> None:
    # In registration order (pluggy calls last-registered first): built-ins in BUILTIN's order, then
    # outside plugins, so `muninn doctor` and `tools/list` keep a stable order.
    for impl in getattr(manager().hook, hook).get_hookimpls():
        impl.function(register=register)


def sources() -> dict[str, type]:
    """{kind: source class}."""
    return _collect("register_sources", lambda cls: cls.kind, "source kind")


def rules() -> dict[str, type]:
    """{rule name: Rule subclass}."""
    return _collect("register_rules", lambda cls: cls.name, "redaction rule")


def stages() -> list[Any]:
    """The search stages, in the order a query runs through them."""
    return list(_collect("register_stages", lambda stage: stage.name, "search stage").values())


def features() -> list[Any]:
    """The fusion features, in the order of the sums."""
    return list(_collect("register_features", lambda feature: feature.name, "fusion feature").values())


def commands() -> list[tuple[str, str, str | None]]:
    """(module, attribute, group name or None) of every CLI command group, in `muninn --help`'s order."""
    return list(_collect("register_commands", lambda part: f"{part[0]}.{part[1]}", "command group").values())


def tools() -> dict[str, Any]:
    """{tool name: ToolSpec}."""
    return _collect("register_tools", lambda spec: spec.name, "tool")


def tool_access() -> dict[str, str]:
    """{tool name: what it does to the tree ("read", "write", "none")}, from each ToolSpec."""
    return {name: spec.access for name, spec in tools().items()}


def checks() -> list[Callable[[Settings], list[Any]]]:
    return list(_collect("register_checks", lambda fn: f"{fn.__module__}.{fn.__qualname__}", "doctor check").values())


def jobs() -> dict[str, Callable[[Any], Any]]:
    """{job name: fn}, in the order `muninn nightly` runs them."""
    return {name: fn for name, fn in _collect("register_jobs", lambda pair: pair[0], "nightly job").values()}


def store_rows() -> list[Callable[[Settings, str | None], list[dict[str, Any]]]]:
    """What `muninn status --stores` lists, from every part that keeps a store per reader."""
    return list(_collect("register_stores", lambda fn: f"{fn.__module__}.{fn.__qualname__}", "store list").values())


def store_leaks() -> list[Callable[[Settings, Any], list[dict[str, Any]]]]:
    """What `muninn policy check` asks of every part that keeps a store per reader (the keyword indexes)."""
    return list(_collect("register_store_leaks", lambda fn: f"{fn.__module__}.{fn.__qualname__}",
                         "store leak check").values())


def known_value_stores() -> list[hookspecs.KnownValues]:
    """Sources of secret values besides the known secret files (the vault's store, the Kubernetes
    Secrets cache, repo `.env` files): see secret_values.known."""
    return list(_collect("register_known_values", lambda src: src.name, "known-value source").values())


def upgrade_steps() -> list[Any]:
    """Workspace upgrade steps (muninn.core.upgrade.Step) that parts above core own."""
    return list(_collect("register_upgrades", lambda step: f"{step.to}:{step.what}", "upgrade step").values())


def backup_parts() -> list[Any]:
    """Local state that cannot be rebuilt (muninn.nightly.backup.parts.LocalPart), from every part."""
    return list(_collect("register_backup_parts", lambda part: part.name, "backup part").values())


def after_sync(settings: Settings, area: str, written: Mapping[str, str], removed: Sequence[str]) -> None:
    manager().hook.after_sync(settings=settings, area=area, written=written, removed=removed)


def after_policy_apply(settings: Settings, policy: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for result in manager().hook.after_policy_apply(settings=settings, policy=policy):
        out.update(result or {})
    return out


def after_up(settings: Settings, say: Callable[[str], None]) -> None:
    manager().hook.after_up(settings=settings, say=say)


def before_down(settings: Settings, say: Callable[[str], None]) -> int:
    return sum(n or 0 for n in manager().hook.before_down(settings=settings, say=say))
