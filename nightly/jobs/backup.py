"""backup: one dated file of what cannot be rebuilt (muninn.nightly.backup.make); what was skipped is a warning."""

from __future__ import annotations

from muninn.nightly.backup.make import create
from muninn.nightly.jobs import Context, JobResult


def backup_job(ctx: Context) -> JobResult:
    report = create(ctx.settings)
    detail = (f"{report.path.name}: {sum(report.areas.values())} file(s) in {len(report.areas)} area(s) "
              f"({report.edited} edited export(s)), {report.rebuildable} left to the exports, "
              f"{report.size} bytes; {', '.join(report.included[1:])}")
    if report.skipped:
        return JobResult("backup", True, f"{detail}; skipped: {'; '.join(report.skipped)}", report.to_json(),
                         status="warn")
    return JobResult("backup", True, detail, report.to_json())
