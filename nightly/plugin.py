"""The built-in nightly jobs, in the order `muninn nightly` runs them, registered through the hook an
outside job would use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from muninn.core.hookspecs import hookimpl


@hookimpl
def register_jobs(register: Callable[[str, Callable[..., Any]], Any]) -> None:
    from muninn.nightly.jobs import (
        acl_drift,
        backup,
        backup_offsite,
        backup_verify,
        completeness,
        leak_gate,
        mirror,
        refresh,
        server_leak_scan,
        skills_drift,
        snapshot,
        verify,
    )

    # Fresh first (the vault's values are what every later gate looks for), checks after, copies last.
    register("refresh", refresh.refresh)
    register("snapshot", snapshot.snapshot)
    register("acl-drift", acl_drift.acl_drift)
    register("skills-drift", skills_drift.skills_drift)
    register("leak-gate", leak_gate.leak_gate)
    register("server-leak-scan", server_leak_scan.server_leak_scan)
    register("completeness", completeness.completeness)
    register("verify", verify.verify)
    register("backup", backup.backup_job)
    register("backup-verify", backup_verify.verify_job)
    register("backup-offsite", backup_offsite.offsite_job)
    register("mirror", mirror.mirror)


@hookimpl
def register_checks(register: Callable[[Callable[..., Any]], None]) -> None:
    from muninn.nightly import doctor_check

    register(doctor_check.nightly_timer)
    register(doctor_check.nightly_last_run)
    register(doctor_check.offsite_backup)


@hookimpl
def register_backup_parts(register: Callable[[Any], Any]) -> None:
    from muninn.nightly.backup import parts as backup_parts

    for part in backup_parts.BUILTIN:
        register(part)
