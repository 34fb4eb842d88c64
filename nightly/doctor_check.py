"""doctor: is a nightly timer installed, and when did `muninn nightly` last run clean."""

from __future__ import annotations

import json

from muninn.core.checks import Check
from muninn.core.config import Settings
from muninn.core.errors import MuninnError


def nightly_timer(settings: Settings) -> list[Check]:
    from muninn.nightly import timers

    try:
        where = timers.installed()
        problem = timers.environment_problem(settings)
    except (MuninnError, OSError) as exc:
        return [Check("nightly timer", "warn", f"could not be read: {exc}", "check `crontab -l`")]
    if not where:
        return [Check("nightly timer", "warn", "none installed: memory changes only when you sync by hand",
                      "run `muninn nightly install --systemd` (or --cron)")]
    if problem:
        return [Check("nightly timer", "fail", f"{', '.join(where)}: {problem}",
                      "rerun `muninn nightly install` with the right --config")]
    return [Check("nightly timer", "ok", f"installed ({', '.join(where)})")]


def nightly_last_run(settings: Settings) -> list[Check]:
    from muninn.nightly import runner

    found = runner.reports(settings)
    if not found:
        return [Check("nightly last run", "warn", "never ran", "run `muninn nightly` (or install the timer)")]
    clean, latest = None, None
    for path in reversed(found):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        latest = latest or data
        if data.get("exit_code") == 0:
            clean = data
            break
    when = (clean or {}).get("finished", "never")
    if latest is not None and latest.get("exit_code") == 0:
        return [Check("nightly last run", "ok", f"clean at {when}")]
    last = f"last run {(latest or {}).get('finished', '?')} exited {(latest or {}).get('exit_code', '?')}"
    return [Check("nightly last run", "warn", f"{last}; last clean run: {when}", "see `muninn nightly --last`")]


def offsite_backup(settings: Settings) -> list[Check]:
    """The off-host copy: set or not, restic there, the repository opens, and how old the newest copy is."""
    from datetime import UTC, datetime, timedelta

    from muninn.nightly.backup import offsite

    if not offsite.configured(settings):
        return [Check("off-host backup", "warn", "backups stay on this host's disk",
                      "set nightly.offsite.repository (a path on another disk or sftp:host:/path), then "
                      "`muninn backup offsite init`")]
    where = settings.nightly.offsite.repository
    try:
        found = offsite.snapshots(settings)
    except MuninnError as exc:
        return [Check("off-host backup", "fail", f"{where}: {exc.message}", exc.fix or "")]
    if not found:
        return [Check("off-host backup", "warn", f"{where}: no copy yet", "run `muninn backup offsite push --fresh`")]
    newest = offsite.snapshot_time(found[-1])
    due = timedelta(hours=2) if settings.nightly.offsite.hourly else timedelta(days=2)
    age = datetime.now(UTC) - newest
    level = "ok" if age <= due else "warn"
    said = f"{where}: {len(found)} backup(s), the newest copied {age.total_seconds() / 3600:.1f} h ago"
    return [Check("off-host backup", level, said,
                  "" if level == "ok" else "run `muninn backup offsite push --fresh`; check the timer")]
