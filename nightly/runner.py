"""Run the nightly jobs in order under one lock; one failing job never stops the others. A job
that raises anything becomes a failed job (`error`) with its error as the reason: the report is
always written. The last `nightly.keep_reports` reports are kept."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

from muninn.core import atomic, registry
from muninn.core.config import Settings
from muninn.core.errors import ConfigError, ExitCode, MuninnError
from muninn.nightly.jobs import Context, JobResult


def folder(settings: Settings) -> Path:
    return settings.paths.nightly_reports


def run(settings: Settings, only: list[str] | None = None) -> list[JobResult]:
    jobs = registry.jobs()
    names = only or list(jobs)
    unknown = [n for n in names if n not in jobs]
    if unknown:
        raise ConfigError(f"unknown nightly job(s): {', '.join(unknown)}", fix=f"known: {', '.join(jobs)}")
    results = []
    ctx = Context(settings)
    for name in names:
        t = time.perf_counter()
        try:
            result = jobs[name](ctx)
        except Exception as exc:  # any crash is this job's failure, never the run's end
            reason = str(exc) if isinstance(exc, MuninnError) else f"{type(exc).__name__}: {exc}"
            result = JobResult(name, False, f"could not run: {reason}", status="error")
        result.seconds = round(time.perf_counter() - t, 2)
        results.append(result)
    return results


def exit_code(results: list[JobResult]) -> ExitCode:
    statuses = {r.status for r in results}
    if "error" in statuses:
        return ExitCode.JOB_FAILED
    return ExitCode.CHECK_FAILED if "findings" in statuses else ExitCode.OK


def report(results: list[JobResult]) -> dict:
    return {"ok": all(r.ok for r in results), "exit_code": int(exit_code(results)),
            "found": {r.name: r.detail for r in results if r.status != "ok"},
            "jobs": [asdict(r) for r in results]}


def save(settings: Settings, results: list[JobResult]) -> Path:
    out = folder(settings)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%S.%fZ')}.json"
    atomic.write_text(path, json.dumps({**report(results), "finished": datetime.now(UTC).isoformat()}, indent=2))
    for old in reports(settings)[:-settings.nightly.keep_reports]:
        old.unlink(missing_ok=True)
    return path


def reports(settings: Settings) -> list[Path]:
    """Saved reports, oldest first (their names sort by time)."""
    return sorted(folder(settings).glob("*Z.json"))


def last(settings: Settings) -> tuple[Path, dict]:
    found = reports(settings)
    if not found:
        raise MuninnError(f"no nightly report yet in {folder(settings)}", fix="run `muninn nightly` first")
    return found[-1], json.loads(found[-1].read_text())
