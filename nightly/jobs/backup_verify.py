"""backup-verify: the restore drill (muninn.nightly.backup.verify) over the latest backup, every night."""

from __future__ import annotations

from muninn.core.errors import MuninnError
from muninn.nightly.backup.verify import drill
from muninn.nightly.jobs import Context, JobResult


def verify_job(ctx: Context) -> JobResult:
    try:
        report = drill(ctx.settings)
    except MuninnError as exc:           # unreadable, or no backup at all: loud, never skipped
        return JobResult("backup-verify", False, exc.message, {"error": exc.message})
    if report.problems:
        return JobResult("backup-verify", False, f"{report.path.name}: {'; '.join(report.problems[:3])}",
                         report.to_json())
    return JobResult("backup-verify", True, f"{report.path.name}: {report.members} member(s) restored into a "
                     f"scratch folder and checked in {report.seconds:.1f} s", report.to_json())
