"""The machine-wide state the verify sweep's serial lane changes, put back after it, under a lock that
other muninn processes respect.

An inventory entry may switch `az account set --subscription …` or `gcloud config set project …` before
its proof: the owner's shell, and every tool that reads the same config, then sees that subscription or
project. The lane reads each switched setting first (`az account show --query id -o tsv`, `gcloud config
get-value PROP`), and sets it back when the lane ends, even when a proof failed or timed out; a setting
that was unset is unset again. Two sweeps at once (a timer's and the owner's, or an agent's
`recall_verify`) would interleave their switches: an `flock` on `<home>/locks/global-state` makes the
second wait for the first's lane, across processes; the kernel drops it if its holder dies.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

TIMEOUT = 30.0


@dataclass
class Kept:
    saved: dict[tuple[str, str], str | None] = field(default_factory=dict)   # (tool, setting) -> value
    restored: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def switched(scripts: Sequence[str]) -> set[tuple[str, str]]:
    """(tool, setting) for every machine-wide switch in the scripts: ("az", "subscription"), ("gcloud", PROP)."""
    out: set[tuple[str, str]] = set()
    for script in scripts:
        for line in script.splitlines():
            try:
                words = shlex.split(line)
            except ValueError:
                continue
            if words[:3] == ["az", "account", "set"]:
                out.add(("az", "subscription"))
            elif words[:3] == ["gcloud", "config", "set"] and len(words) >= 4:
                out.add(("gcloud", words[3]))
    return out


def _read(tool: str, setting: str, env: Mapping[str, str]) -> str | None:
    cmd = (["az", "account", "show", "--query", "id", "-o", "tsv"] if tool == "az"
           else ["gcloud", "config", "get-value", setting])
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, env=dict(env), timeout=TIMEOUT,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    value = done.stdout.strip().splitlines()[-1].strip() if done.returncode == 0 and done.stdout.strip() else ""
    return value or None


def _write(tool: str, setting: str, value: str | None, env: Mapping[str, str]) -> str | None:
    if tool == "az":
        if value is None:
            return None                 # no account was selected: az has no "unselect"
        cmd = ["az", "account", "set", "--subscription", value]
    else:
        cmd = ["gcloud", "config", "set", setting, value] if value is not None else \
            ["gcloud", "config", "unset", setting]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, env=dict(env), timeout=TIMEOUT,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{shlex.join(cmd)}: {exc}"
    return None if done.returncode == 0 else f"{shlex.join(cmd)}: exit {done.returncode}"


@contextmanager
def locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)          # waits: the other sweep's lane is short
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextmanager
def kept(scripts: Sequence[str], env: Mapping[str, str], lock: Path) -> Iterator[Kept]:
    """Around the serial lane: the lock, the settings read before, and written back after."""
    out = Kept()
    with locked(lock):
        for tool, setting in sorted(switched(scripts)):
            out.saved[(tool, setting)] = _read(tool, setting, env)
        try:
            yield out
        finally:
            for (tool, setting), value in out.saved.items():
                if _read(tool, setting, env) == value:
                    continue
                problem = _write(tool, setting, value, env)
                if problem:
                    out.problems.append(problem)
                else:
                    out.restored.append(f"{tool} {setting}")
