"""recall_secret_find, recall_secret_show, recall_secret_command: not wired yet. the vault (plugins/vault, issue 6)
has not landed in a form this server can call,
so these tools are registered as unavailable: never listed, refused if called, named in recall_status."""

from __future__ import annotations

from muninn.plugins.mcp.registry import Output, Params, ToolSpec, register
from muninn.plugins.mcp.session import GuardSession, Refused

UNAVAILABLE = "the vault (plugins/vault, issue 6) is not wired into the MCP server yet"


def _absent(session: GuardSession, p: Params) -> Output:
    raise Refused(UNAVAILABLE)


register(ToolSpec(name="recall_secret_find", description="Not wired yet.", params=Params, handler=_absent,
                   unavailable=UNAVAILABLE))
register(ToolSpec(name="recall_secret_show", description="Not wired yet.", params=Params, handler=_absent,
                   unavailable=UNAVAILABLE))
register(ToolSpec(name="recall_secret_command", description="Not wired yet.", params=Params, handler=_absent,
                   unavailable=UNAVAILABLE))
