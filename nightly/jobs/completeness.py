"""Completeness: every file a sync manifest says muninn wrote is on the server, counted folder by
folder (one recursive listing was seen to stop silently part-way)."""

from __future__ import annotations

from muninn.core.client import OpenViking
from muninn.export.pipeline import configured
from muninn.export.sync import Manifest, remote_files
from muninn.nightly.jobs import Context, JobResult


def completeness(ctx: Context) -> JobResult:
    if not ctx.settings.sources:
        return JobResult("completeness", True, "no sources configured", {})
    missing: dict[str, int] = {}
    counted = 0
    with OpenViking.user(ctx.settings) as client:
        for area in sorted({c.area for c in configured(ctx.settings)}):
            manifest = Manifest.for_target(client, area, ctx.settings.paths.sync_manifests)
            present = remote_files(client, area)
            owned = manifest.owned()
            counted += len(owned)
            lost = [rel for rel in owned if rel not in present]
            if lost:
                missing[area] = len(lost)
    detail = ", ".join(f"{a}: {n} missing" for a, n in missing.items()) or f"{counted} owned file(s) all present"
    return JobResult("completeness", not missing, detail, {"owned": counted, "missing": missing})
