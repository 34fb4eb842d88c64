"""backup-offsite: the night's sealed backup copied off the host (muninn.nightly.backup.offsite), retention
applied and the repository checked. Without a destination it is skipped with a warning, never silently."""

from __future__ import annotations

from muninn.core.errors import MuninnError
from muninn.nightly.backup import offsite
from muninn.nightly.jobs import Context, JobResult


def offsite_job(ctx: Context) -> JobResult:
    if not offsite.configured(ctx.settings):
        return JobResult("backup-offsite", True, "no off-host destination (nightly.offsite.repository): "
                         "backups stay on this host", status="warn")
    try:
        pushed = offsite.push(ctx.settings)
        checked = offsite.check(ctx.settings, read_data=False)
    except MuninnError as exc:          # unreachable or refused: a finding, the local backup is untouched
        return JobResult("backup-offsite", False, exc.message, {"error": exc.message})
    return JobResult("backup-offsite", True, f"copied {len(pushed.sent)} to {pushed.repository}, "
                     f"{pushed.forgotten} past retention removed; check: {checked}", pushed.to_json())
