"""recall_verify: not wired yet. verify (plugins/verify, issue 6)
has not landed in a form this server can call,
so these tools are registered as unavailable: never listed, refused if called, named in recall_status."""

from __future__ import annotations

from muninn.plugins.mcp.registry import Output, Params, ToolSpec, register
from muninn.plugins.mcp.session import GuardSession, Refused

UNAVAILABLE = "verify (plugins/verify, issue 6) is not wired into the MCP server yet"


def _absent(session: GuardSession, p: Params) -> Output:
    raise Refused(UNAVAILABLE)


register(ToolSpec(name="recall_verify", description="Not wired yet.", params=Params, handler=_absent,
                   unavailable=UNAVAILABLE))
