"""The read-only verify sweep: which credentials and routes still work this morning. `skipped`
(a prerequisite such as the VPN is down, or the guard refused the proof command) is a warning:
nothing was found wrong, it just could not be looked at tonight."""

from __future__ import annotations

from collections import Counter

from muninn.nightly.jobs import Context, JobResult
from muninn.plugins.access import sweep

WARN = frozenset({"skipped"})


def verify(ctx: Context) -> JobResult:
    if not ctx.settings.inventory.files and not ctx.settings.vault.files:
        return JobResult("verify", True, "no inventory or vault configured", {})
    results = sweep.run(ctx.settings, sweep.plan(ctx.settings), who="nightly")
    counts = Counter(r.status for r in results)
    bad = [f"{r.id}: {r.status} ({r.reason})" for r in results if r.status not in WARN | {"ok"}]
    skipped = [f"{r.id}: skipped ({r.reason})" for r in results if r.status in WARN]
    detail = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "nothing to verify"
    status = "findings" if bad else "warn" if skipped else "ok"
    return JobResult("verify", not bad, detail, {"counts": dict(counts), "problems": bad, "skipped": skipped},
                     status=status)
