"""The extension points. muninn's own parts and outside plugins implement the same hooks.

An outside package declares an entry point in the group `muninn` naming a module that holds
`@hookimpl` functions; muninn's own plugin modules are listed in `muninn.core.registry.BUILTIN`
and go through the same door. A `register_*` hook is handed a `register` callable and calls it
once per thing it adds; the hook is called each time the registry is asked, so nothing depends
on which module happened to be imported first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from muninn.core.config import Settings

hookspec = pluggy.HookspecMarker("muninn")
hookimpl = pluggy.HookimplMarker("muninn")


@hookspec
def register_sources(register: Callable[[type], Any]) -> None:
    """Export sources: `register(cls)`, cls with `kind`, `Options` and `facts()`."""


@hookspec
def register_rules(register: Callable[[type], Any]) -> None:
    """Redaction rules: `register(cls)`, a `muninn.guards.rules.Rule` subclass with a unique `name`."""


@hookspec
def register_tools(register: Callable[[Any], Any]) -> None:
    """MCP tools: `register(spec)`, a `muninn.plugins.mcp.registry.ToolSpec` (its `access` included)."""


@hookspec
def register_stages(register: Callable[[Any], Any]) -> None:
    """Search stages, in the order a query runs through them: `register(stage)`, a
    muninn.plugins.search.state.Stage with a unique `name` (an outside plugin's stages run after the
    built-ins)."""


@hookspec
def register_features(register: Callable[[Any], Any]) -> None:
    """Fusion features, in the order of the sums: `register(feature)`, a
    muninn.plugins.search.features.Feature with a unique `name`."""


@hookspec
def register_commands(register: Callable[[str, str, str | None], Any]) -> None:
    """CLI command groups, in the order `muninn --help` lists them: `register(module, attr, name)`, the
    typer app at `module.attr`, its commands at the top (`name` None) or under a group `name`. Named,
    not imported: a part is imported only when one of its commands runs."""


@hookspec
def register_checks(register: Callable[[Callable[[Settings], list[Any]]], Any]) -> None:
    """`muninn doctor` lines: `register(fn)`, fn(settings) -> list[muninn.core.checks.Check]."""


@hookspec
def register_jobs(register: Callable[[str, Callable[[Any], Any]], Any]) -> None:
    """Nightly jobs: `register(name, fn)`, fn(muninn.nightly.jobs.Context) -> JobResult."""


@hookspec
def register_stores(register: Callable[[Callable[[Settings, str | None], list[dict[str, Any]]]], Any]) -> None:
    """`muninn status --stores` rows: `register(fn)`, fn(settings, reader or None for every reader) ->
    [{"reader", "area", "uri", "files", "newest", "index"}] (the search plugin's keyword indexes)."""


@hookspec
def register_store_leaks(register: Callable[[Callable[[Settings, Any], list[dict[str, Any]]]], Any]) -> None:
    """`muninn policy check`'s local half: `register(fn)`, fn(settings, policy) -> one {"reader", "index",
    "files", "examples", "fix"} per reader whose local store holds what its policy does not let it read."""


@dataclass(frozen=True)
class KnownValues:
    """A source of known secret values besides the files of `settings.paths.known_secret_files()`.

    `values(settings)` gives (secret id, value) pairs and must not reach out of the machine: every
    redactor and leak gate calls it. `declared`: the owner said each one is a secret (the vault), so
    the declared rule applies; False for values read from where secrets live, which pass the
    guessed-value filter (secret-ish, not a locator) unless `keyed` (Kubernetes Secrets, repo `.env`
    files: the source filtered each value by its key through `guards/known/setting_values.py`).
    `refresh(settings)`, when given, reads the live source into the source's cache and returns
    warnings (a cluster that did not answer); export calls it before it gathers the values."""

    name: str
    values: Callable[[Settings], Iterable[tuple[str, str]]]
    declared: bool = True
    # The source filtered each value by the key it was read under (`setting_values`): a `password`
    # key's short value passed the credential rule, which `known` must not undo.
    keyed: bool = False
    refresh: Callable[[Settings], list[str]] | None = None
    # Values among `values` that are retired (the vault's `secret retire`, a replaced value): redacted
    # everywhere, but the server leak scan reports them as retired values, as it did their hashes.
    retired: Callable[[Settings], Iterable[str]] | None = None


@hookspec
def register_known_values(register: Callable[[KnownValues], Any]) -> None:
    """Sources of secret values besides the known secret files: `register(KnownValues(...))` (the vault's
    store, the Kubernetes Secrets cache, the `.env` files of repo sources). Read only through
    `muninn.guards.known.secret_values.known`, the one collector export, the leak gates and MCP redaction use."""


@hookspec
def register_upgrades(register: Callable[[Any], Any]) -> None:
    """Workspace upgrade steps: `register(step)`, a muninn.core.upgrade.Step for a file the plugin owns."""


@hookspec
def register_backup_parts(register: Callable[[Any], Any]) -> None:
    """Local state a backup must hold because nothing rebuilds it: `register(part)`, a
    muninn.nightly.backup.parts.LocalPart (a name, and where its file or folder lives)."""


@hookspec
def after_sync(settings: Settings, area: str, written: Mapping[str, str], removed: Sequence[str]) -> None:
    """Called after a sync wrote `written` ({uri: content}) and removed `removed` under `area`."""


@hookspec
def after_policy_apply(settings: Settings, policy: Any) -> dict[str, str]:
    """Called when `policy apply` has set every ACL: bring what a part keeps per reader (the search part's
    keyword indexes and vector caches) to `policy` now. Returns {reader: what happened}."""


@hookspec
def after_up(settings: Settings, say: Callable[[str], None]) -> None:
    """Called when `muninn up` has the stack running and the policy applied (warm what a first call needs)."""


@hookspec
def before_down(settings: Settings, say: Callable[[str], None]) -> int:
    """Called by `muninn down` before the stack stops: stop what the part started; how many processes."""
