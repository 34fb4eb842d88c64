"""leak-gate: the independent leak gate over every exported tree before anything else
trusts it. A finding names the file, line, rule and secret id; never a value."""

from __future__ import annotations

from muninn.guards.gate.leak_gate import LeakGate
from muninn.guards.known.secret_values import known
from muninn.guards.redact.allowlist import gate_allow
from muninn.nightly.jobs import Context, JobResult


def leak_gate(ctx: Context) -> JobResult:
    root = ctx.settings.paths.exports
    if not root.exists():
        return JobResult("leak-gate", True, f"nothing exported yet under {root}", {"files": 0})
    report = LeakGate(known(ctx.settings), allow=gate_allow(ctx.settings.paths.redact_allowlist)).check_tree(root)
    data = report.to_json()
    n = len(data.get("dropped", []))
    return JobResult("leak-gate", report.clean, f"{n} file(s) hold a secret" if n else f"clean under {root}", data)
