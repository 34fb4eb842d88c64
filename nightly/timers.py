"""`muninn nightly install --cron|--systemd`: what runs `muninn nightly` each night and keeps `muninn watch`
running, with the environment a timer lacks. Cron and systemd start jobs with almost no environment
(no session keyring, no MUNINN_CONFIG), so every line and unit carries the config path and the keyring
backend (and the folders a file keyring and the workspace live in, when set), exactly as `muninn mcp
config` gives an MCP client (one owner: muninn.plugins.mcp.rules.server_env).

Cron: two lines in the user's crontab, each ending in a marker comment, so a reinstall replaces them and
leaves every other line alone; `watch` starts `@reboot` (cron keeps nothing running). Systemd: user units
in `$XDG_CONFIG_HOME/systemd/user/` (a service and a timer for nightly, a service for watch), then
`systemctl --user daemon-reload` and `enable --now`.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from muninn.core import paths
from muninn.core.config import Settings
from muninn.core.errors import ConfigError, MuninnError

Kind = Literal["cron", "systemd"]
MARK = "# muninn:"
UNITS = ("muninn-nightly.service", "muninn-nightly.timer", "muninn-watch.service")
OFFSITE_UNITS = ("muninn-offsite.service", "muninn-offsite.timer")
OFFSITE_PUSH = "backup offsite push --fresh --json"


def hourly_offsite(settings: Settings) -> bool:
    """Seed 002's storage is in the hourly host backup: with an off-host destination, direct writes reach
    it within the hour (a fresh sealed backup, then its copy)."""
    return bool(settings.nightly.offsite.repository) and settings.nightly.offsite.hourly


@dataclass
class Installed:
    kind: Kind
    written: list[str] = field(default_factory=list)       # files, or "crontab"
    lines: list[str] = field(default_factory=list)         # what went into them
    ran: list[str] = field(default_factory=list)           # systemctl commands run
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "written": self.written, "lines": self.lines, "ran": self.ran,
                "warnings": self.warnings}


def environment(settings: Settings, config: Path | None) -> dict[str, str]:
    from muninn.plugins.mcp.rules import server_env

    return server_env(config or settings.source_file, settings.keyring.backend)


def command() -> list[str]:
    from muninn.plugins.mcp.rules import command as muninn_command

    return muninn_command()


def _at(at: str) -> tuple[int, int]:
    m = re.fullmatch(r"([01]?\d|2[0-3]):([0-5]\d)", at)
    if not m:
        raise ConfigError(f"--at {at!r} is not a time of day", key="--at", fix="give HH:MM, e.g. 03:15")
    return int(m.group(1)), int(m.group(2))


# --- cron -----------------------------------------------------------------------------------------

def _cron_escape(text: str) -> str:
    # In a crontab command an unescaped % ends the command (the rest becomes stdin).
    return text.replace("%", r"\%")


def cron_lines(settings: Settings, config: Path | None, at: str = "03:15") -> list[str]:
    hour, minute = _at(at)
    env = environment(settings, config)
    prefix = shlex.join(["env", *(f"{k}={v}" for k, v in env.items()), *command()])
    log = settings.paths.nightly_reports / "cron.log"
    nightly = f"{prefix} nightly --json > {shlex.quote(str(log))} 2>&1"
    watch = f"{prefix} watch >> {shlex.quote(str(settings.paths.nightly_reports / 'watch.log'))} 2>&1"
    lines = [f"{minute} {hour} * * * {_cron_escape(nightly)} {MARK}nightly",
             f"@reboot {_cron_escape(watch)} {MARK}watch"]
    if hourly_offsite(settings):
        offsite = f"{prefix} {OFFSITE_PUSH} > {shlex.quote(str(settings.paths.nightly_reports / 'offsite.log'))} 2>&1"
        lines.append(f"{(minute + 30) % 60} * * * * {_cron_escape(offsite)} {MARK}offsite")
    return lines


def _crontab() -> str:
    found = shutil.which("crontab")
    if found is None:
        raise MuninnError("no `crontab` command on PATH", fix="install cron, or use `muninn nightly install --systemd`")
    return found


def read_crontab() -> str:
    proc = subprocess.run([_crontab(), "-l"], capture_output=True, text=True)
    # `crontab -l` exits 1 with "no crontab for USER" when there is none yet: that is an empty one.
    return proc.stdout if proc.returncode == 0 else ""


def install_cron(settings: Settings, config: Path | None, at: str = "03:15") -> Installed:
    lines = cron_lines(settings, config, at)
    kept = [line for line in read_crontab().splitlines() if MARK not in line]
    text = "\n".join([*kept, *lines]) + "\n"
    proc = subprocess.run([_crontab(), "-"], input=text, capture_output=True, text=True)
    if proc.returncode != 0:
        raise MuninnError(f"crontab refused the new table: {proc.stderr.strip()}",
                          fix="check `crontab -l`, or use --systemd")
    settings.paths.nightly_reports.mkdir(parents=True, exist_ok=True)
    return Installed("cron", ["crontab"], lines)


# --- systemd --------------------------------------------------------------------------------------

def unit_dir() -> Path:
    return paths.config_dir().parent / "systemd" / "user"


def _systemd_quote(value: str) -> str:
    # % starts a specifier in unit files; the whole assignment is quoted for spaces.
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    return f'"{escaped}"'


def units(settings: Settings, config: Path | None, at: str = "03:15") -> dict[str, str]:
    hour, minute = _at(at)
    env = "".join(f"Environment={_systemd_quote(f'{k}={v}')}\n" for k, v in environment(settings, config).items())
    cmd = " ".join(_systemd_quote(part) for part in command())
    out = {
        "muninn-nightly.service": "[Unit]\nDescription=muninn nightly jobs\n\n[Service]\nType=oneshot\n"
                                  f"{env}ExecStart={cmd} nightly --json\n",
        "muninn-nightly.timer": f"[Unit]\nDescription=muninn nightly at {hour:02d}:{minute:02d}\n\n[Timer]\n"
                                f"OnCalendar=*-*-* {hour:02d}:{minute:02d}:00\nPersistent=true\n\n"
                                "[Install]\nWantedBy=timers.target\n",
        "muninn-watch.service": "[Unit]\nDescription=muninn watch: observations exported and synced\n\n"
                                f"[Service]\n{env}ExecStart={cmd} watch\nRestart=on-failure\nRestartSec=30\n\n"
                                "[Install]\nWantedBy=default.target\n",
    }
    if hourly_offsite(settings):
        out["muninn-offsite.service"] = ("[Unit]\nDescription=muninn backup copied off the host\n\n[Service]\n"
                                         f"Type=oneshot\n{env}ExecStart={cmd} {OFFSITE_PUSH}\n")
        out["muninn-offsite.timer"] = ("[Unit]\nDescription=muninn off-host backup, hourly\n\n[Timer]\n"
                                       f"OnCalendar=*-*-* *:{(minute + 30) % 60:02d}:00\nPersistent=true\n\n"
                                       "[Install]\nWantedBy=timers.target\n")
    return out


def install_systemd(settings: Settings, config: Path | None, at: str = "03:15", start: bool = True) -> Installed:
    folder = unit_dir()
    folder.mkdir(parents=True, exist_ok=True)
    out = Installed("systemd")
    for name, text in units(settings, config, at).items():
        (folder / name).write_text(text)
        out.written.append(str(folder / name))
        out.lines += [line for line in text.splitlines() if line.startswith(("ExecStart", "OnCalendar"))]
    systemctl = shutil.which("systemctl")
    if not start or systemctl is None:
        out.warnings.append("units written but not enabled: run `systemctl --user daemon-reload && systemctl "
                            "--user enable --now muninn-nightly.timer muninn-watch.service`")
        return out
    timers = ["muninn-nightly.timer", "muninn-watch.service"] + (["muninn-offsite.timer"] if hourly_offsite(settings)
                                                                 else [])
    for args in (["daemon-reload"], ["enable", "--now", *timers]):
        proc = subprocess.run([systemctl, "--user", *args], capture_output=True, text=True)
        out.ran.append(shlex.join(["systemctl", "--user", *args]))
        if proc.returncode != 0:
            out.warnings.append(f"`systemctl --user {' '.join(args)}` failed: {proc.stderr.strip()[:200]}; the "
                                "units are written, enable them once a user session bus runs")
            break
    return out


# --- what doctor says -----------------------------------------------------------------------------

def installed() -> list[str]:
    """Where a nightly timer is installed: "cron" when the crontab holds muninn's line, "systemd" when the
    timer unit is written (enabled or not is systemd's to say)."""
    where = []
    if shutil.which("crontab") and f"{MARK}nightly" in read_crontab():
        where.append("cron")
    if (unit_dir() / "muninn-nightly.timer").exists():
        where.append("systemd")
    return where


def _cron_config(line: str) -> str | None:
    body = line.split(MARK)[0]
    try:
        words = shlex.split(body.replace("\\%", "%"))
    except ValueError:
        return None
    return next((w.split("=", 1)[1] for w in words if w.startswith("MUNINN_CONFIG=")), None)


def _unit_config(text: str) -> str | None:
    for line in text.splitlines():
        if line.startswith('Environment="MUNINN_CONFIG='):
            value = line[len('Environment="MUNINN_CONFIG='):-1]
            return value.replace("%%", "%").replace('\\"', '"').replace("\\\\", "\\")
    return None


def environment_problem(settings: Settings) -> str | None:
    """A unit or cron line whose MUNINN_CONFIG names a file that is gone would fail every night silently."""
    configs = [_unit_config((unit_dir() / n).read_text()) for n in (*UNITS, *OFFSITE_UNITS)
               if (unit_dir() / n).exists()]
    if shutil.which("crontab"):
        configs += [_cron_config(line) for line in read_crontab().splitlines() if MARK in line]
    for config in configs:
        if config is not None and not Path(config).exists():
            return f"a timer's MUNINN_CONFIG names {config}, which does not exist"
    return None
