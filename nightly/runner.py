"""Run the nightly jobs in order; one failing job never stops the others. A job that crashes is a
failed job with its error as the reason: the report must always be written."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path

from muninn.core import registry
from muninn.core.config import Settings
from muninn.core.errors import MuninnError
from muninn.nightly.jobs import Context, JobResult


def run(settings: Settings, only: list[str] | None = None) -> list[JobResult]:
    jobs = registry.jobs()
    names = only or list(jobs)
    unknown = [n for n in names if n not in jobs]
    if unknown:
        raise MuninnError(f"unknown nightly job(s): {', '.join(unknown)}", fix=f"known: {', '.join(jobs)}")
    results = []
    ctx = Context(settings)
    for name in names:
        t = time.perf_counter()
        try:
            result = jobs[name](ctx)
        except MuninnError as exc:  # a job's domain error is its failure reason, not the run's end
            result = JobResult(name, False, str(exc))
        result.seconds = round(time.perf_counter() - t, 2)
        results.append(result)
    return results


def save(settings: Settings, results: list[JobResult]) -> Path:
    folder = settings.paths.nightly_reports
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.json"
    path.write_text(json.dumps(report(results), indent=2))
    return path


def report(results: list[JobResult]) -> dict:
    return {"ok": all(r.ok for r in results), "jobs": [asdict(r) for r in results]}
