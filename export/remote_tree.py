"""A notes tree on another host (`remote: ssh://[user@]host[:port]/path` on a source), pulled read-only into
the source's `path` before it is exported: the local mirror, 0700, written by nothing else.

The pull is OpenSSH's own client, so it goes as the user's `ssh` goes: their agent or identity files, their
`~/.ssh/config` (aliases, ProxyJump), their `known_hosts`. Host keys are always checked
(`StrictHostKeyChecking=yes`, never `no`; a source may pin its own `known_hosts` file), and muninn writes no
key anywhere. It is incremental: the host lists path, size and time of every file (`find -printf`), and only
what changed comes over, by `sftp`. It is all or nothing: the changed files land in a staging folder first,
and the mirror is brought up to date (new, changed, gone) only after the whole listing and every transfer
succeeded. An unreachable host, a refused key, a file that would not come: the last mirror stays as it was,
nothing is pruned, and the export goes on from it with a warning.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from muninn.core.errors import ConfigError, ExitCode, MuninnError

URL = re.compile(r"^ssh://(?:(?P<user>[A-Za-z0-9._-]+)@)?(?P<host>[A-Za-z0-9._-]+|\[[0-9a-fA-F:]+\])"
                 r"(?::(?P<port>\d{1,5}))?(?P<path>/.*)$")
STATE = ".muninn-pull.json"        # in the mirror: what each file was when it came over
TIMEOUT = 120.0


class PullFailed(MuninnError):
    """The remote tree could not be pulled whole: the mirror is as it was."""

    exit_code = ExitCode.REMOTE_UNREACHABLE


@dataclass(frozen=True)
class Remote:
    host: str
    path: str
    user: str | None = None
    port: int | None = None

    @classmethod
    def parse(cls, url: str) -> Remote:
        m = URL.match(url)
        if not m:
            raise ConfigError(f"{url!r} is not an ssh://[user@]host[:port]/absolute/path URL", key="remote",
                              fix="e.g. remote: ssh://notes@fileserver/srv/notes")
        return cls(m["host"], m["path"].rstrip("/") or "/", m["user"], int(m["port"]) if m["port"] else None)

    @property
    def target(self) -> str:
        return f"{self.user}@{self.host}" if self.user else self.host

    def options(self, known_hosts: Path | None) -> list[str]:
        opts = ["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-o", f"ConnectTimeout={int(TIMEOUT // 4)}"]
        if known_hosts is not None:
            opts += ["-o", f"UserKnownHostsFile={known_hosts}"]
        return opts


@dataclass
class Pulled:
    remote: str
    fetched: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    warning: str | None = None          # set when the pull failed and the last mirror was kept

    def to_json(self) -> dict[str, object]:
        return {"remote": self.remote, "fetched": self.fetched, "removed": self.removed,
                "unchanged": self.unchanged, "warning": self.warning}


def _run(cmd: list[str], what: str, remote: str, stdin: str | None = None) -> str:
    try:
        done = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        raise PullFailed(f"{remote}: {what} took longer than {TIMEOUT:.0f} s", fix="check the host is up") from exc
    except FileNotFoundError as exc:
        raise PullFailed(f"{cmd[0]} is not installed", fix="install openssh-client") from exc
    if done.returncode != 0:
        lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
        reason = (lines[-1] if lines else f"exit {done.returncode}").strip()[:300]
        fix = ("add the host's key to known_hosts (`ssh HOST` once, and check its fingerprint)"
               if "host key" in reason.lower() else "check the host, the path and that your ssh key is loaded")
        raise PullFailed(f"{remote}: {what} failed: {reason}", fix=fix)
    return done.stdout


def listing(remote: Remote, known_hosts: Path | None) -> dict[str, tuple[int, int]]:
    """rel path -> (size, mtime seconds) of every regular file under the remote path (links not followed)."""
    cmd = ["ssh", *remote.options(known_hosts), *(["-p", str(remote.port)] if remote.port else []), remote.target,
           "--", "find", shlex.quote(remote.path), "-type", "f", "-printf", shlex.quote(r"%P\t%s\t%T@\n")]
    out: dict[str, tuple[int, int]] = {}
    for line in _run(cmd, "listing", str(remote.path)).splitlines():
        try:
            rel, size, mtime = line.rsplit("\t", 2)
        except ValueError:          # a name with a newline in it: not a note muninn can name either
            continue
        if rel and not any(part in ("", ".", "..") for part in rel.split("/")):
            out[rel] = (int(size), int(float(mtime)))
    return out


def _wanted(rel: str, pattern: str) -> bool:
    return fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(rel, pattern.removeprefix("**/"))


def _sftp_quote(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def pull(url: str, mirror: Path, pattern: str = "**/*.md", known_hosts: Path | None = None) -> Pulled:
    """Bring `mirror` to what the remote tree holds (files matching `pattern`), or leave it as it was."""
    remote = Remote.parse(url)
    mirror.mkdir(parents=True, exist_ok=True, mode=0o700)
    mirror.chmod(0o700)
    state_file = mirror / STATE
    try:
        before: dict[str, list[int]] = json.loads(state_file.read_text()) if state_file.exists() else {}
    except ValueError:
        before = {}
    seen = {rel: v for rel, v in listing(remote, known_hosts).items() if _wanted(rel, pattern)}
    report = Pulled(url)
    changed = [rel for rel, v in seen.items() if before.get(rel) != list(v) or not (mirror / rel).is_file()]
    report.unchanged = len(seen) - len(changed)
    with tempfile.TemporaryDirectory(dir=mirror.parent, prefix=f".{mirror.name}-pull-") as tmp:
        staging = Path(tmp)
        if changed:
            for rel in changed:
                (staging / rel).parent.mkdir(parents=True, exist_ok=True)
            batch = "".join(f"get -p {_sftp_quote(remote.path + '/' + rel)} {_sftp_quote(str(staging / rel))}\n"
                            for rel in changed)
            _run(["sftp", *remote.options(known_hosts), *(["-P", str(remote.port)] if remote.port else []),
                  "-b", "-", remote.target], "transfer", url, stdin=batch)
            missing = [rel for rel in changed if not (staging / rel).is_file()]
            if missing:
                raise PullFailed(f"{url}: {len(missing)} file(s) did not come over ({missing[0]}, ...)",
                                 fix="rerun; the last mirror was kept")
        # Everything is here: now, and only now, the mirror changes.
        for rel in changed:
            dest = mirror / rel
            dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if dest.is_symlink():
                dest.unlink()
            os.replace(staging / rel, dest)
            report.fetched.append(rel)
    for rel in sorted(set(before) - set(seen)):
        gone = mirror / rel
        if gone.is_file() and not gone.is_symlink():
            gone.unlink()
            report.removed.append(rel)
    tmp_state = state_file.with_suffix(".tmp")
    tmp_state.write_text(json.dumps({rel: list(v) for rel, v in seen.items()}))
    os.replace(tmp_state, state_file)
    return report


def pull_or_keep(url: str, mirror: Path, pattern: str = "**/*.md", known_hosts: Path | None = None) -> Pulled:
    """`pull`, but a failure keeps the last mirror and says so; with no mirror yet it is the failure."""
    try:
        return pull(url, mirror, pattern, known_hosts)
    except PullFailed as exc:
        if not (mirror / STATE).exists():
            raise
        return Pulled(url, warning=f"{exc.message}; exported from the last mirror (nothing pruned)")

