"""mirror: the task/roadmap export (`sources:` of the kinds in `nightly.mirror_kinds`) and the areas of
`nightly.mirror_areas` as the server holds them (under `server/`: a reader's direct write into the
roadmap shows up in the history, which the export alone never holds) committed into a local git
repository (`nightly.mirror`), one commit a night whose message counts the changes.

A git history keeps whatever it was ever given, so nothing reaches a commit without the leak gate:
each exported file is gated before it is copied in (a file that fails is not copied and is reported),
the whole work tree is gated again before the commit (a file that holds a value learnt since is taken
out), and the whole history (`git log -p`) is scanned after it, so a value that became known after
it was committed is reported by commit and secret id; never by value.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from muninn.core import atomic
from muninn.core.config import Settings
from muninn.core.errors import ConfigError
from muninn.export import pipeline
from muninn.guards.gate.leak_gate import LeakGate
from muninn.guards.known.retired import Ledger
from muninn.guards.known.secret_values import known as known_values
from muninn.guards.redact.allowlist import gate_allow
from muninn.nightly.jobs import Context, JobResult
from muninn.nightly.scan_cache import fingerprint

# Fixed identity and no signing: a cron job has no agent to sign with, and the mirror is the owner's own.
_GIT_CONFIG = ("-c", "user.name=muninn nightly", "-c", "user.email=muninn@localhost", "-c", "commit.gpgsign=false")


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    proc = subprocess.run(["git", *_GIT_CONFIG, "-C", str(repo), *args], capture_output=True, text=True, env=env,
                          errors="replace")
    if proc.returncode != 0:
        raise ConfigError(f"git {args[0]} failed in the mirror: {proc.stderr.strip()[:300]}", path=str(repo),
                          fix="check that nightly.mirror is a git repository muninn may write")
    return proc.stdout


def wanted(settings: Settings) -> dict[str, Path]:
    """{path in the mirror: exported file} for every mirrored source, ledgers left out."""
    kinds = set(settings.nightly.mirror_kinds)
    out: dict[str, Path] = {}

    for c in (pipeline.configured(settings) if settings.sources else []):
        if c.kind not in kinds or not c.out_dir(settings).is_dir():
            continue
        base = c.out_dir(settings)
        prefix = c.uri.removeprefix('viking://resources/')
        for f in sorted(base.rglob("*")):
            if f.is_file() and pipeline.LEDGER_DIR not in f.relative_to(base).parts:
                out[f"{prefix}/{f.relative_to(base).as_posix()}"] = f
    return out


SERVER_DIR = "server"


def server_files(settings: Settings, unreadable: list[str]) -> dict[str, bytes]:
    """{path in the mirror: bytes} of every file of `nightly.mirror_areas` on the server, each read with
    the first key that may (the CLI's, then each reader's). The server's derived files are left out."""
    from muninn.nightly.backup import server as backup_server

    areas = [a.rstrip("/") for a in settings.nightly.mirror_areas]
    if not areas:
        return {}
    got = backup_server.collect(settings, areas, every_file=True)
    unreadable += got.unreadable
    return {f"{SERVER_DIR}/{f.uri.removeprefix('viking://resources/')}": f.data for f in got.files}


def tracked(repo: Path) -> set[str]:
    return {p for p in git(repo, "ls-files", "-z").split("\0") if p}


def history_findings(repo: Path, gate: LeakGate, cache: Path | None = None,
                     fingerprint: str = "") -> list[dict[str, Any]]:
    """Known values anywhere in the history: each commit's patch scanned, named by commit and secret id.
    With a `cache`, a commit found clean under the same `fingerprint` of the known values is not read
    again (a commit never changes); another fingerprint (a value learnt since) reads every commit."""
    if not git(repo, "rev-list", "--all", "--max-count=1").strip():
        return []
    clean = _clean_commits(cache, fingerprint)
    found: list[dict[str, Any]] = []
    commits = git(repo, "rev-list", "--all").split()
    for commit in commits:
        if commit in clean:
            continue
        patch = git(repo, "show", "--format=%B", "-p", "--no-color", "--no-ext-diff", commit)
        ids = sorted({f.secret_id or f.reason for f in gate.scan(patch)})
        if ids:
            found.append({"commit": commit[:12], "secret_ids": ids})
        else:
            clean.add(commit)
    if cache is not None and fingerprint:
        atomic.write_text(cache, json.dumps({"fingerprint": fingerprint, "clean": sorted(clean & set(commits))}),
                          mode=0o600)
    return found


def _clean_commits(cache: Path | None, fingerprint: str) -> set[str]:
    if cache is None or not fingerprint:
        return set()
    try:
        data = json.loads(cache.read_text())
    except (OSError, ValueError):
        return set()        # none yet, or unreadable: every commit is read
    if not isinstance(data, dict) or data.get("fingerprint") != fingerprint:
        return set()
    return {c for c in data.get("clean", []) if isinstance(c, str)}


def history_cache(settings: Settings) -> Path:
    return settings.paths.nightly_reports / "mirror-history-cache.json"


def mirror(ctx: Context) -> JobResult:
    s = ctx.settings
    unreadable: list[str] = []
    files: dict[str, bytes | Path] = {**wanted(s), **server_files(s, unreadable)}
    repo = s.paths.mirror
    if not files and not (repo / ".git").exists():
        return JobResult("mirror", True, f"no export of kind {', '.join(s.nightly.mirror_kinds)} to mirror", {})
    if not (repo / ".git").exists():
        repo.mkdir(parents=True, exist_ok=True)
        git(repo, "init", "-q")
    known = known_values(s)
    gate = LeakGate(known, allow=gate_allow(s.paths.redact_allowlist))
    dropped: list[dict[str, str]] = []
    before = tracked(repo)
    for rel, src in files.items():
        data = src if isinstance(src, bytes) else src.read_bytes()
        dest = repo / rel
        if dest.is_file() and dest.read_bytes() == data:
            continue   # as copied before: not gated twice nor rewritten; the whole-tree gate below reads it
        findings = gate.scan_path(rel) + gate.scan(data.decode("utf-8", errors="replace"))
        if findings:
            dropped.append({"path": rel, "reason": ", ".join(sorted({f.secret_id or f.reason for f in findings}))})
            continue
        atomic.write_bytes(dest, data)
    gone = sorted(before - set(files))
    for rel in gone:
        (repo / rel).unlink(missing_ok=True)
    # Again over the whole work tree: a file copied on an earlier night may hold a value learnt since.
    report = gate.check_tree(repo, [p for p in repo.rglob("*") if p.is_file() and ".git" not in
                                    p.relative_to(repo).parts])
    for d in report.dropped:
        (repo / d.path).unlink(missing_ok=True)
        if not any(x["path"] == d.path for x in dropped):
            dropped.append({"path": d.path, "reason": d.reason})
    _prune_empty_dirs(repo)
    git(repo, "add", "-A")
    counts = {"added": 0, "changed": 0, "removed": 0}
    for line in git(repo, "diff", "--cached", "--name-status", "--no-renames").splitlines():
        status = line[:1]
        counts["added" if status == "A" else "removed" if status == "D" else "changed"] += 1
    commit = None
    if any(counts.values()):
        message = (f"muninn nightly {datetime.now(UTC):%Y-%m-%d}: {counts['added']} added, "
                   f"{counts['changed']} changed, {counts['removed']} removed")
        git(repo, "commit", "-q", "-m", message)
        commit = git(repo, "rev-parse", "--short=12", "HEAD").strip()
    ledger = Ledger(s.paths.retired_hashes)   # its salt keys the fingerprint: no value is guessable from it
    history = history_findings(repo, LeakGate(known, patterns=False), history_cache(s),
                               fingerprint(ledger.salt, known, ()) if ledger.path.exists() else "")
    data = {"repo": str(repo), "files": len(files) - len(dropped), "commit": commit, **counts,
            "dropped": dropped, "history": history, "unreadable": unreadable}
    problems = [f"not committed: {d['path']} ({d['reason']})" for d in dropped]
    problems += [f"the mirror's history holds {', '.join(h['secret_ids'])} in commit {h['commit']}: rewrite "
                 f"the history, then rotate the value" for h in history]
    if problems:
        more = f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
        return JobResult("mirror", False, "; ".join(problems[:3]) + more, data)
    what = (f"commit {commit}: {counts['added']} added, {counts['changed']} changed, {counts['removed']} removed"
            if commit else "no change tonight")
    if unreadable:
        return JobResult("mirror", True, f"{what}; {len(files)} file(s) in {repo}; not read: "
                         f"{'; '.join(unreadable[:3])}", data, status="warn")
    return JobResult("mirror", True, f"{what}; {len(files)} file(s) in {repo}", data)


def _prune_empty_dirs(repo: Path) -> None:
    for d in sorted((p for p in repo.rglob("*") if p.is_dir() and ".git" not in p.relative_to(repo).parts),
                    key=lambda p: len(p.parts), reverse=True):
        if not any(d.iterdir()):
            shutil.rmtree(d, ignore_errors=True)
