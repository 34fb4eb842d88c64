"""recall_status: who this server acts as, what it may do, and what is missing."""

from __future__ import annotations

from muninn.core.errors import ServerError
from muninn.guards.policy import tools as tool_guard
from muninn.plugins.mcp import registry
from muninn.plugins.mcp.registry import Output, Params, ToolSpec
from muninn.plugins.mcp.session import GuardSession
from muninn.plugins.search import reader_index


class StatusParams(Params):
    pass


def handle(session: GuardSession, p: StatusParams) -> Output:
    prof = session.profile
    try:
        health = session.client.health()
        server = "ok" if health.get("status") in ("ok", "healthy", None) else str(health.get("status"))
    except ServerError as exc:
        server = f"unreachable: {exc.message}"
    data = {
        "profile": prof.name, "kind": prof.kind, "account": prof.account, "user": prof.user,
        "read_prefixes": list(prof.read_prefixes), "write_prefixes": list(prof.write_prefixes),
        "remember_to": prof.remember_to,
        # Nested areas inside its read areas that decide against it: the server refuses them, so does muninn.
        "not_readable": [a.uri for a in prof.deciding if not prof.may("read", a.uri)
                         and any(a.uri.startswith(p + "/") for p in prof.read_prefixes)],
        "tools": tool_guard.visible_tools(prof, frozenset(registry.all_tools())),
        "server": server, "redacted_values": session.redactor.count,
        "stores": reader_index.store_status(session.settings, prof, session.policy.areas),
    }
    lines = [f"reader {prof.name} ({prof.kind}) as {prof.account}/{prof.user}; server: {server}",
             "reads: " + ", ".join(prof.read_prefixes), "writes: " + (", ".join(prof.write_prefixes) or "none"),
             "tools: " + ", ".join(data["tools"])]
    if data["not_readable"]:
        lines.insert(2, "not readable inside them: " + ", ".join(data["not_readable"]))
    for row in data["stores"]:
        lines.append(f"area {row['area']}: {row['files']} files, newest {row['newest'] or '-'}; "
                     f"keyword index: {row['index']}")
    if session.settings.outside and session.outside:   # only those this reader may query: others are invisible
        from muninn.plugins.search.outside import memories

        states = memories.states(session.outside)
        data["outside"] = [st.to_dict() for st in states]
        lines += [st.line() for st in states]
    return Output("\n".join(lines), data)


STATUS = ToolSpec(
    name="recall_status",
    description=("Show which reader this server acts as, its areas and tools, whether memory is reachable, "
                 "and for each readable area its file count, newest fact and keyword index freshness; then each "
                 "outside memory it may query: available or why not, and how many entries."),
    params=StatusParams, handler=handle, access="none", agent_default=True, init_agent=True,
)
