"""The MCP server's built-in tools and its doctor line, registered through the hooks an outside
plugin would use. The order here is the order `tools/list` and a default owner profile show."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from muninn.core.config import Settings
from muninn.core.hookspecs import hookimpl


@hookimpl
def register_tools(register: Callable[[Any], Any]) -> None:
    from muninn.plugins.mcp.tools import access, listing, read, remember, search, secrets, status, verify

    for spec in (search.SEARCH, read.READ, listing.LIST, remember.REMEMBER, secrets.SECRET_FIND,
                 secrets.SECRET_SHOW, secrets.SECRET_COMMAND, access.ACCESS_FIND, access.ACCESS_SHOW,
                 access.ACCESS_EXEC, verify.VERIFY, status.STATUS):
        register(spec)


@hookimpl
def register_checks(register: Callable[[Callable[..., Any]], Any]) -> None:
    from muninn.plugins.mcp import doctor_check

    register(doctor_check.guard_policy)
    register(doctor_check.source_reach)


@hookimpl
def register_upgrades(register: Callable[[Any], Any]) -> None:
    from muninn.plugins.mcp import rename_remembered

    register(rename_remembered.STEP)


@hookimpl
def after_sync(settings: Settings, area: str, written: Mapping[str, str], removed: Sequence[str]) -> None:
    """A URI sync removed (a fact renamed because its name held a value, or pruned) leaves the audit log too."""
    if not removed:
        return
    from muninn.plugins.mcp import audit
    from muninn.plugins.mcp.redaction import ValueRedactor

    audit.purge_uris(settings.paths.audit_log, removed, lambda: ValueRedactor.from_settings(settings).scrub_all)
