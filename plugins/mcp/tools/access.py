"""recall_access_find, recall_access_show, recall_access_exec: reach a cluster, host, account or
service the way the inventory says, without reading kubeconfigs, ssh configs or env scripts.

recall_access_exec runs here: prerequisites first (a down VPN fails at once with one sentence),
then the entry's setup steps and the command in one shell, linked secrets injected, every byte of
output masked (stdout and stderr as one stream). The child reads /dev/null, never the MCP stream on
this server's stdin. It is a live tool: calling it resets the history-only nudge.
"""

from __future__ import annotations

import io

from pydantic import Field

from muninn.core.errors import Refused
from muninn.plugins.access.inventory import Inventory
from muninn.plugins.access.prereq import PrerequisiteDown
from muninn.plugins.mcp.registry import Output, Params, ToolSpec
from muninn.plugins.mcp.session import GuardSession

MAX_OUTPUT = 20_000


def _inventory(session: GuardSession) -> Inventory:
    return Inventory.open(session.settings, who=f"mcp:{session.profile.name}", scrub=session.redactor.scrub_all)


class FindParams(Params):
    query: str = Field(min_length=1, max_length=500, description="What to reach: 'ops cluster', 'jump host', an alias")
    limit: int = Field(5, ge=1, le=20)


def find(session: GuardSession, p: FindParams) -> Output:
    hits = _inventory(session).find(p.query, limit=p.limit)
    keep = ("id", "kind", "name", "aliases", "environment", "requires", "score")
    hits = [{k: h.get(k) for k in keep} for h in hits]
    lines = [f"{h['id']}  ({h.get('kind')}, {h.get('environment')})"
             + (f" requires {', '.join(h['requires'])}" if h.get("requires") else "") for h in hits]
    text = "\n".join(lines) if lines else f"No inventory entry matches {p.query!r}."
    return Output(text + "\n\nNext: recall_access_show ID for its access steps.", {"hits": hits})


class ShowParams(Params):
    id: str = Field(min_length=1, max_length=200, description="An inventory id (or alias) from recall_access_find")


def show(session: GuardSession, p: ShowParams) -> Output:
    entry = _inventory(session).show(p.id)
    data = {k: entry.get(k) for k in ("id", "kind", "name", "environment", "requires", "requires_all", "access",
                                        "verify", "secrets", "last_verified", "block")}
    return Output(entry["block"] + "\n\nNext: recall_access_exec ID with the command to run there.", data)


class ExecParams(Params):
    id: str = Field(min_length=1, max_length=200, description="An inventory id (or alias)")
    command: str = Field(min_length=1, max_length=4000, description="The command to run once the access steps ran, "
                         "e.g. 'kubectl get pods -n argocd'")
    timeout: float = Field(120.0, gt=0, le=900, description="Seconds before the command is stopped")
    stdin_secret: str | None = Field(None, max_length=200, description="One of the entry's linked secret ids: its "
                                     "value goes to the command's stdin (for `sudo -S`), never to you")


def exec_(session: GuardSession, p: ExecParams) -> Output:
    # One buffer for both streams: both reach the same reader, so they are masked as one stream (a value
    # written half to stdout and half to stderr is caught whole) and read in the order they were written.
    out = io.BytesIO()
    try:
        # The child reads /dev/null (plugins/access/runner.py), never the MCP stream this server is reading.
        result = _inventory(session).exec(p.id, p.command, stdout=out, stderr=out, timeout=p.timeout,
                                          stdin_secret=p.stdin_secret)
    except PrerequisiteDown as down:
        raise Refused(f"{down.message}. Do not retry or debug credentials.") from None
    output = out.getvalue().decode(errors="replace")[-MAX_OUTPUT:]
    status = "timed out" if result.timed_out else f"exit {result.exit_code}"
    text = f"{p.id}: {status}\n--- output (stdout and stderr, in order)\n{output}"
    return Output(text, {"id": p.id, "exit_code": result.exit_code, "timed_out": result.timed_out,
                         "stdout": output, "masked": len(result.hits)})


ACCESS_FIND = ToolSpec(
    name="recall_access_find",
    description=(
        "Find how to reach a cluster, VM, cloud account or internal service. Use it before reaching "
        "anything; never read ~/.kube/config, ~/.ssh/config or env scripts to work it out."
    ),
    params=FindParams, handler=find, access="none", agent_default=True,
)
ACCESS_SHOW = ToolSpec(
    name="recall_access_show",
    description=(
        "Show an inventory entry's access block: prerequisites (e.g. vpn), ordered steps, the proof "
        "command, linked secret ids, and when it was last verified."
    ),
    params=ShowParams, handler=show, access="none", agent_default=True,
)
ACCESS_EXEC = ToolSpec(
    name="recall_access_exec",
    description=(
        "Run a command on an inventory entry: prerequisites are checked first, the access steps run in "
        "the same shell, linked secrets are injected and the output is masked. If it says a prerequisite "
        "is down (e.g. the VPN), tell the user and stop: a 403 without VPN is not a bad token. This is "
        "the live check to use instead of searching memory for current state."
    ),
    params=ExecParams, handler=exec_, access="none", read_only=False, destructive=True, idempotent=False,
    open_world=True, live=True,
)
