"""recall_list: what lies in a folder, or which areas this reader has."""

from __future__ import annotations

from pydantic import Field

from muninn.plugins.mcp.registry import URI_MAX, Output, Params, ToolSpec
from muninn.plugins.mcp.session import GuardSession

MAX_ENTRIES = 500


class ListParams(Params):
    uri: str | None = Field(None, min_length=1, max_length=URI_MAX,
                            description="A viking:// folder; leave empty to list this reader's areas")


def handle(session: GuardSession, p: ListParams) -> Output:
    if p.uri is None:
        areas = [{"area": a, "uri": session.policy.areas[a], "level": lv}
                 for a, lv in sorted(session.profile.areas.items())]
        lines = [f"{x['uri']}  ({x['area']}, {x['level']})" for x in areas]
        return Output("Areas this reader can use:\n" + "\n".join(lines), {"areas": areas})
    uri = session.require("recall_list", p.uri, "read")
    entries = [e for e in session.client.ls(uri) if session.readable(e.uri)][:MAX_ENTRIES]
    # A name can hold a secret nobody declared (a token an agent named a file after): read like export reads one.
    shown = [session.redactor.scrub_name(e.uri) for e in entries]
    pairs = list(zip(shown, entries, strict=True))
    lines = [f"{u}{'/' if e.is_dir else ''}" for u, e in pairs]
    return Output(f"{uri}:\n" + ("\n".join(lines) or "(empty)"),
                  {"uri": uri, "entries": [{"uri": u, "is_dir": e.is_dir} for u, e in pairs]})


LIST = ToolSpec(
    name="recall_list",
    description=(
        "List a folder of the shared memory, or, with no URI, the areas this reader may use and its "
        "level in each (read, write, manage). Prefer recall_search to browsing."
    ),
    params=ListParams, handler=handle, access="read", agent_default=True, init_agent=True,
)
