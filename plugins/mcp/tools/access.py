"""recall_access_find, recall_access_show, recall_access_exec: not wired yet. the inventory (plugins/inventory, issue 6)
has not landed in a form this server can call,
so these tools are registered as unavailable: never listed, refused if called, named in recall_status."""

from __future__ import annotations

from muninn.plugins.mcp.registry import Output, Params, ToolSpec, register
from muninn.plugins.mcp.session import GuardSession, Refused

UNAVAILABLE = "the inventory (plugins/inventory, issue 6) is not wired into the MCP server yet"


def _absent(session: GuardSession, p: Params) -> Output:
    raise Refused(UNAVAILABLE)


register(ToolSpec(name="recall_access_find", description="Not wired yet.", params=Params, handler=_absent,
                   unavailable=UNAVAILABLE))
register(ToolSpec(name="recall_access_show", description="Not wired yet.", params=Params, handler=_absent,
                   unavailable=UNAVAILABLE))
register(ToolSpec(name="recall_access_exec", description="Not wired yet.", params=Params, handler=_absent,
                   unavailable=UNAVAILABLE))
