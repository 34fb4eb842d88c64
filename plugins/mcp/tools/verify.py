"""recall_verify: the read-only sweep (inventory proof commands, secret checks), one status per item.

Every command passes the verify command guard first; a refusal is `skipped` with the reason.
It is a live tool: calling it resets the history-only nudge.
"""

from __future__ import annotations

from pydantic import Field

from muninn.plugins.access import sweep
from muninn.plugins.mcp.registry import Name, Output, Params, ToolSpec
from muninn.plugins.mcp.session import GuardSession


class VerifyParams(Params):
    ids: list[Name] = Field(default_factory=list, max_length=50,
                           description="Inventory or secret ids to check (default: everything)")
    dry_run: bool = Field(False, description="Only print what would run and the guard's verdict for each command")


def handle(session: GuardSession, p: VerifyParams) -> Output:
    items = sweep.plan(session.settings, p.ids)
    if p.dry_run:
        rows = [{"kind": i.kind, "id": i.id, "command": session.redactor.scrub_all(i.command), "allowed": i.allowed,
                 "verdict": session.redactor.scrub_all(i.verdict)} for i in items]
        lines = [f"{'run ' if r['allowed'] else 'skip'} {r['kind']} {r['id']}: {r['command']}  ({r['verdict']})"
                 for r in rows]
        return Output("\n".join(lines) or "Nothing to verify.", {"dry_run": True, "items": rows})
    results = sweep.run(session.settings, items, who=f"mcp:{session.profile.name}")
    # Values and patterns: a proof's output is not a fact file that was redacted on the way in.
    rows = [{k: session.redactor.scrub_all(v) if isinstance(v, str) else v for k, v in r.as_dict().items()}
            for r in results]
    lines = [f"{r['status']:<11} {r['kind']} {r['id']}: {r['reason']}" for r in rows]
    return Output("\n".join(lines) or "Nothing to verify.", {"dry_run": False, "results": rows})


VERIFY = ToolSpec(
    name="recall_verify",
    description=(
        "Check, read-only, that credentials and access routes still work: one status per item (ok, "
        "stale = log in or rotate, unreachable = network or VPN, missing = not set up here, skipped) "
        "with the reason. Run it before a task that spans several systems or after an auth error, and "
        "act on the reason it gives."
    ),
    params=VerifyParams, handler=handle, access="none", read_only=True, idempotent=True, open_world=True, live=True,
)
