"""Backups that leave the host: the sealed archives (never live SQLite files) copied into a restic
repository at a path on another disk or over sftp (`nightly.offsite.repository`), kept by restic's own
retention reconciled with `nightly.keep_*`, drilled with `restic check`, and fetched back so that
every restore from it still goes through the restore gate (restore.py).

The repository's password is derived from the backup key (`backup:key` in the keyring), so the one key
file `muninn backup key export` writes is all a new machine needs besides the repository; an owner who
points muninn at a repository of their own puts its password in the keyring as `backup:restic`. The
password reaches restic as a variable of its own process, never a file or an argument.

restic is a field tool (Debian's `restic`, 0.14 or later): muninn runs it, it does not bundle it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from muninn.core import credentials
from muninn.core.config import Settings
from muninn.core.errors import ConfigError, ExitCode, MuninnError
from muninn.nightly.backup import crypt as backup_crypt
from muninn.nightly.backup import make as backup

TAG = "muninn-backup"
OWN_PASSWORD = "backup:restic"


class OffsiteFailed(MuninnError):
    """restic could not reach, open or check the off-host repository: nothing local was changed."""

    exit_code = ExitCode.OFFSITE_FAILED


@dataclass
class Pushed:
    repository: str
    sent: list[str] = field(default_factory=list)          # archive names copied this time
    already: int = 0                                          # archives the repository held before
    forgotten: int = 0                                        # snapshots retention removed

    def to_json(self) -> dict[str, Any]:
        return {"repository": self.repository, "sent": self.sent, "already": self.already,
                "forgotten": self.forgotten}


def configured(settings: Settings) -> bool:
    return bool(settings.nightly.offsite.repository)


def restic_binary(settings: Settings) -> str:
    chosen = settings.nightly.offsite.restic
    found = str(chosen) if chosen else shutil.which("restic")
    if not found or not Path(found).exists():
        raise ConfigError("restic is not installed, and off-host backups run through it",
                          key="nightly.offsite.restic",
                          fix="`sudo apt install restic` (or set nightly.offsite.restic to its path)")
    return found


def password(settings: Settings) -> str:
    """The repository's password: the owner's own (`backup:restic`), else one derived from the backup key."""
    own = credentials.for_home(settings).get(OWN_PASSWORD)
    if own:
        return own
    derived = hmac.new(backup_crypt.key(settings, create=True), b"muninn restic repository password",
                       hashlib.sha256).digest()
    return base64.urlsafe_b64encode(derived).decode().rstrip("=")


def _env(settings: Settings) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RESTIC_")}
    env.update(RESTIC_REPOSITORY=str(settings.nightly.offsite.repository), RESTIC_PASSWORD=password(settings),
               RESTIC_CACHE_DIR=str(settings.paths.restic_cache), RESTIC_PROGRESS_FPS="0.2",
               TZ="UTC")              # archive stamps are UTC; restic reads --time as local
    env.pop("MUNINN_PASSPHRASE", None)
    return env


def _options(settings: Settings) -> list[str]:
    return [arg for option in settings.nightly.offsite.options for arg in ("-o", option)]


def restic(settings: Settings, *args: str, what: str, timeout: float = 3600) -> subprocess.CompletedProcess:
    """One restic command against the configured repository; a failure is one sentence naming what failed."""
    if not configured(settings):
        raise ConfigError("no off-host backup destination is set", key="nightly.offsite.repository",
                          fix="set it to a path on another disk or `sftp:user@host:/path`, then "
                              "`muninn backup offsite init`")
    try:
        done = subprocess.run([restic_binary(settings), *_options(settings), *args], env=_env(settings),
                              capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise OffsiteFailed(f"restic {what} took longer than {timeout:.0f} s",
                            fix="check the destination's network and disk") from exc
    if done.returncode != 0:
        raise OffsiteFailed(f"restic could not {what} at {settings.nightly.offsite.repository}: "
                            f"{_reason(done.stderr)}", fix=_fix(done.stderr))
    return done


def _reason(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip() and not ln.startswith(("repository ", "using "))]
    return (lines[-1] if lines else "no reason given")[:300]


def _fix(stderr: str) -> str:
    text = stderr.lower()
    if "wrong password" in text or "no key found" in text:
        return ("the repository was made with another password: import the backup key it was made with "
                "(`muninn backup key import FILE`), or put its own password in the keyring as backup:restic")
    if "does not exist" in text or "unable to open config" in text or "is there a repository" in text:
        return "run `muninn backup offsite init` once, or check nightly.offsite.repository"
    return "check that the destination is reachable and writable, then rerun"


def init(settings: Settings) -> str:
    """Create the repository, or prove an existing one opens with our password."""
    probe = subprocess.run([restic_binary(settings), *_options(settings), "cat", "config"], env=_env(settings),
                           capture_output=True, text=True, timeout=120) if configured(settings) else None
    if probe is not None and probe.returncode == 0:
        return "opened"
    restic(settings, "init", what="create the repository")
    return "created"


def snapshots(settings: Settings) -> list[dict[str, Any]]:
    done = restic(settings, "snapshots", "--json", "--tag", TAG, what="list snapshots", timeout=300)
    found = json.loads(done.stdout or "[]") or []
    return sorted(found, key=lambda s: s.get("time", ""))


def snapshot_time(snapshot: dict[str, Any]) -> datetime:
    """restic prints times in its TZ, which _env sets to UTC."""
    return datetime.strptime(snapshot["time"][:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)


def archive_name(snapshot: dict[str, Any]) -> str:
    return Path((snapshot.get("paths") or [""])[0]).name


def push(settings: Settings, fresh: bool = False) -> Pushed:
    """Copy every local sealed archive the repository does not hold yet (with `fresh`, make one now
    first), then apply retention. An archive goes as a snapshot of its own, stamped with its own time."""
    if fresh:
        backup.create(settings)
    held = {archive_name(s) for s in snapshots(settings)}
    report = Pushed(str(settings.nightly.offsite.repository), already=len(held))
    for path in backup.listing(settings):
        if path.name in held or path.suffix != ".mbk":        # an unsealed .tar.gz never leaves the host
            continue
        stamp = backup.stamp(path).strftime("%Y-%m-%d %H:%M:%S")
        restic(settings, "backup", "--tag", TAG, "--time", stamp, "--host", "muninn", str(path),
               what=f"copy {path.name}")
        report.sent.append(path.name)
    report.forgotten = forget(settings)
    return report


def retention_args(settings: Settings) -> list[str]:
    n = settings.nightly
    args = ["--keep-daily", str(n.keep_backups), "--keep-weekly", str(n.keep_weekly_backups)]
    if n.offsite.keep_hourly:
        args += ["--keep-hourly", str(n.offsite.keep_hourly)]
    return args


def forget(settings: Settings) -> int:
    """restic's retention over muninn's snapshots as one group (each archive has its own path)."""
    before = len(snapshots(settings))
    restic(settings, "forget", "--tag", TAG, "--group-by", "tags", *retention_args(settings), "--prune",
           what="apply retention")
    return before - len(snapshots(settings))


def check(settings: Settings, read_data: bool = True) -> str:
    """The drill: `restic check`, reading every pack back with `read_data` (the repository is small:
    sealed archives of what cannot be rebuilt)."""
    done = restic(settings, "check", *(["--read-data"] if read_data else []), what="check the repository")
    return _reason(done.stdout) if done.stdout.strip() else "no errors were found"


def fetch(settings: Settings, snapshot: str = "latest") -> Path:
    """Bring one archive back from the repository into <home>/backups/ (0600) and return its path; a
    restore then opens it like any local backup, through the gate."""
    chosen = [s for s in snapshots(settings) if snapshot in ("latest", s.get("id"), s.get("short_id"),
                                                              archive_name(s))]
    if not chosen:
        raise OffsiteFailed(f"the repository holds no muninn backup {snapshot!r}",
                            fix="`muninn backup offsite list` names the snapshots it holds")
    pick = chosen[-1]
    out = backup.folder(settings)
    out.mkdir(parents=True, exist_ok=True, mode=0o700)
    with tempfile.TemporaryDirectory(dir=out, prefix=".offsite-") as tmp:
        restic(settings, "restore", pick["id"], "--target", tmp, what=f"fetch {archive_name(pick)}")
        got = [p for p in Path(tmp).rglob("*.mbk") if p.is_file()]
        if len(got) != 1:
            raise OffsiteFailed(f"snapshot {pick['short_id']} does not hold one sealed archive",
                                fix="choose another snapshot: `muninn backup offsite list`")
        dest = out / got[0].name
        if not dest.exists():
            os.replace(got[0], dest)
            dest.chmod(0o600)
    return dest
