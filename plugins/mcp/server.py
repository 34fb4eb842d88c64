"""The MCP server (mcp SDK, low-level `Server`, stdio). Every call goes through one path:

    tool allowed for this profile? → arguments valid? → handler (URI checks inside, via
    session.require) → untrusted labels (inside) → nudge → value redaction → audit line

Tools not in the profile are neither listed nor callable: both lists come from
guards.tools.check_tool. Refusals are tool errors with the reason, so the agent can correct
itself; each one is audited like an allowed call.
"""

from __future__ import annotations

import time
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server
from pydantic import ValidationError

from muninn.core.errors import MuninnError, Refused
from muninn.guards.policy import tools as tool_guard
from muninn.plugins.mcp import registry, rules
from muninn.plugins.mcp.session import GuardSession


def _result(text: str, data: dict[str, Any] | None = None, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=data, is_error=error)


def call(session: GuardSession, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
    """One guarded call, transport-free (the benchmark and `guard check` use it directly)."""
    started = time.perf_counter()
    args = arguments or {}
    decision, reason, out = "deny", "", None
    written: str | None = None   # the URI a write created: the audit names what an agent wrote, not only its text
    try:
        checked = tool_guard.check_tool(session.profile, name)
        spec = registry.all_tools().get(name)
        if not checked.allowed:
            reason = checked.reason
        elif spec is None:
            reason = f"{name!r} is not available in this server"
        else:
            try:
                params = spec.params.model_validate(args)
            except ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(str(p) for p in err["loc"]) or "arguments"
                reason = f"invalid arguments: {where}: {err['msg']}"
            else:
                output = spec.handler(session, params)
                nudge = session.note_call(name, spec.live)
                text = output.text + (f"\n\n{nudge}" if nudge else "")
                data = dict(output.data)
                if nudge:
                    data["nudge"] = nudge
                decision, reason = "allow", checked.reason
                written = data.get("uri") if spec.access == "write" and isinstance(data.get("uri"), str) else None
                out = _result(session.redactor.scrub(text), session.scrub_data(data))
    except Refused as exc:
        reason = exc.message
    except MuninnError as exc:
        decision, reason = "error", str(exc)
    except Exception as exc:  # the edge: an unexpected failure is reported and audited, never an allow
        decision, reason = "error", f"{type(exc).__name__}: {exc}"
    if out is None:
        word = "refused" if decision == "deny" else "failed"
        out = _result(session.redactor.scrub(f"{word}: {reason}"),
                      session.scrub_data({"decision": decision, "reason": reason}), error=True)
    session.audit.record(profile=session.profile.name, tool=name, arguments=args, decision=decision,
                         reason=reason, duration_ms=(time.perf_counter() - started) * 1000, uri=written)
    return out


def listed_tools(session: GuardSession) -> list[types.Tool]:
    specs = registry.all_tools()
    return [
        types.Tool(name=name, description=specs[name].description, input_schema=specs[name].input_schema(),
                   annotations=specs[name].annotations)
        for name in tool_guard.visible_tools(session.profile, frozenset(specs))
    ]


def build(session: GuardSession) -> Server:
    async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed_tools(session))

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return call(session, params.name, params.arguments)

    return Server("muninn", version="0.1.0", instructions=rules.instructions(session.profile),
                  on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def serve_http(session: GuardSession, port: int) -> None:
    """Streamable HTTP, on loopback only: the guard is per profile, not an authenticated service.
    The SDK turns on DNS-rebinding protection for a loopback host."""
    import uvicorn

    app = build(session).streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()


async def serve_stdio(session: GuardSession) -> None:
    from muninn.plugins.mcp.stdin_lines import claimed_stdin

    server = build(session)
    with claimed_stdin() as lines:
        async with stdio_server(stdin=lines) as (read, write):   # type: ignore[arg-type]
            await server.run(read, write, server.create_initialization_options())
