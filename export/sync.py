"""Sync a folder of fact files into one OpenViking area, touching only files muninn owns.

Ownership is a manifest (relative path → content hash) kept in the workspace, not in
OpenViking: a manifest inside the area would be indexed and searched like any fact, and any
user with write access there could add someone else's file to it and have `--prune` delete
that file. Losing the local manifest is safe: a remote file whose bytes equal the local fact
is adopted again, and one that differs is reported as a conflict and left alone.

A path in the manifest is muninn's only while the server still holds the bytes muninn wrote
there: readers edit exported files in place. Before a file is replaced or pruned its server
bytes are read and hashed; bytes the manifest does not name are a reader's edit, a conflict
that is kept and named (exit 19) unless `replace` is asked for.

Each batch is recorded as `pending` before it is sent and moved to `files` once the server
confirms it, so a run killed at any point leaves a manifest that covers everything it may have
written; the rerun rewrites those paths in place (same URIs, `replace`), so there are never
duplicates. Batches are written with `wait: true`: OpenViking answers CONFLICT ("resource is
busy") to a second batch on the same root while the first is still being indexed.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from muninn.core import atomic, billing, paths, registry
from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.core.errors import ConfigError, ExitCode, MuninnError, NotFound, ServerBusy, ServerError
from muninn.core.workspace import Workspace
from muninn.export.facts import slug
from muninn.export.sync_gate import Passed, SyncGate

AREA_PREFIX = "viking://resources/"


class SyncIncomplete(MuninnError):
    """Files that should be in OpenViking are not there after the wait."""

    exit_code = ExitCode.SYNC_INCOMPLETE


class SyncConflict(MuninnError):
    """The server holds bytes muninn did not write at a path sync would replace or prune: kept."""

    exit_code = ExitCode.SYNC_CONFLICT


@dataclass
class SyncReport:
    written: int = 0
    unchanged: int = 0
    removed: int = 0
    missing_after_wait: int = 0
    conflicts: list[str] = field(default_factory=list)  # paths held by files muninn did not write
    edited: list[str] = field(default_factory=list)     # of `conflicts`: muninn's files a reader changed
    missing: list[str] = field(default_factory=list)
    manifest: Path | None = None

    def as_json(self) -> dict[str, Any]:
        """The `--json` contract of `muninn sync`. `conflicts` appears only when there are some."""
        out: dict[str, Any] = {"written": self.written, "unchanged": self.unchanged, "removed": self.removed,
                               "missing_after_wait": self.missing_after_wait}
        if self.conflicts:
            out["conflicts"] = self.conflicts
            out["edited"] = self.edited
        return out


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_area(to_uri: str) -> str:
    uri = to_uri.rstrip("/")
    if not uri.startswith(AREA_PREFIX) or len(uri) == len(AREA_PREFIX) or ".." in uri.split("/"):
        raise ConfigError(f"sync target {to_uri!r} is not an area", key="--to",
                          fix="use viking://resources/<area>, e.g. viking://resources/notes")
    return uri


def local_files(src_dir: Path) -> dict[str, bytes]:
    """Fact files under `src_dir` (`*.md`, no hidden files or folders): relative path → bytes."""
    if not src_dir.is_dir():
        raise ConfigError("sync source is not a folder", path=str(src_dir), fix="export into it first")
    out: dict[str, bytes] = {}
    for p in sorted(src_dir.rglob("*.md")):
        rel = p.relative_to(src_dir)
        if p.is_file() and not any(part.startswith(".") for part in rel.parts):
            out[rel.as_posix()] = p.read_bytes()
    return out


class Manifest:
    """What muninn wrote to one area for one identity on one server.

    Saved atomically under a unique temp name (`atomic.write_text`), so a reader never sees half a
    manifest and two writers never share a temp file; `locked()` holds an exclusive lock for a
    whole read-modify-write (one sync), so two syncs of the same area take turns instead of one
    overwriting what the other recorded."""

    def __init__(self, path: Path, header: dict[str, str]) -> None:
        self.path = path
        self.header = header
        self.files: dict[str, str] = {}
        self.pending: dict[str, str] = {}
        self.load()

    def load(self) -> None:
        if not self.path.exists():
            return
        try:
            data = json.loads(self.path.read_text())
            self.files, self.pending = dict(data.get("files", {})), dict(data.get("pending", {}))
        except (ValueError, AttributeError, TypeError):
            raise ConfigError("the sync manifest is not valid JSON", path=str(self.path),
                              fix="delete it: the next sync adopts remote files whose bytes match") from None

    @contextmanager
    def locked(self) -> Iterator[Manifest]:
        """Exclusive for the block (waits for another sync of the same target), re-read inside it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                self.load()
                yield self
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    @classmethod
    def for_target(cls, client: OpenViking, to_uri: str, folder: Path) -> Manifest:
        header = {"server": client.url, "identity": client.key_name, "to": to_uri}
        digest = sha(json.dumps(header, sort_keys=True).encode())[:12]
        return cls(folder / f"{slug(to_uri.removeprefix(AREA_PREFIX), 60)}-{digest}.json", header)

    def owned(self) -> set[str]:
        return set(self.files) | set(self.pending)

    def wrote(self, rel: str, data: bytes) -> bool:
        """Whether `data` is what muninn wrote (or was writing) at `rel`: else a reader changed it."""
        return sha(data) in {self.files.get(rel), self.pending.get(rel)} - {None}

    def save(self) -> None:
        atomic.write_text(self.path, json.dumps({**self.header, "files": self.files, "pending": self.pending},
                                                indent=0, sort_keys=True), mode=0o600)


def owned_everywhere(folder: Path) -> set[str]:
    """Every viking:// URI any sync manifest in `folder` says muninn wrote (any server, any identity):
    what `muninn forget` must leave to the source. An unreadable manifest fails like a sync's would."""
    out: set[str] = set()
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        manifest = Manifest(path, {})
        try:
            to = str(json.loads(path.read_text()).get("to") or "")
        except (ValueError, AttributeError):
            to = ""
        out |= {f"{to}/{rel}" for rel in manifest.owned()} if to else set()
    return out


def while_busy(call: Callable[[], Any], wait: float, sleep: Callable[[float], None] = time.sleep) -> Any:
    """`call()`, retried with backoff (0.5 s doubling to 8 s) while the server answers CONFLICT
    ("resource is busy": it is still indexing an earlier write, e.g. right after a restart), for at
    most `wait` seconds; then the busy error, with how long it waited."""
    deadline, delay = time.monotonic() + wait, 0.5
    while True:
        try:
            return call()
        except ServerBusy as exc:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ServerBusy(f"{exc.message}; still busy after {wait:.0f} s of retries", uri=exc.uri,
                                 fix="wait for indexing to finish (`muninn status`), then rerun; or raise "
                                     "server.busy_wait in muninn.yaml") from None
            sleep(min(delay, left))
            delay = min(delay * 2, 8.0)


def remote_files(client: OpenViking, to_uri: str) -> set[str]:
    """Relative paths of every file under the area, walked folder by folder (listings truncate)."""
    try:
        return {e.uri[len(to_uri) + 1:] for e in client.walk(to_uri)}
    except NotFound:
        return set()


def read_many(client: OpenViking, uris: list[str], workers: int = 8,
              skip: tuple[type[ServerError], ...] = (NotFound,)) -> dict[str, bytes]:
    """{uri: server bytes} for each uri that still exists (one gone since the listing is left out,
    and one that raises any error of `skip`)."""
    def one(uri: str) -> tuple[str, bytes] | None:
        try:
            return uri, client.read(uri).encode("utf-8")
        except skip:
            return None

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return dict(p for p in pool.map(one, uris) if p is not None)


def sync(client: OpenViking, src_dir: Path | str | Passed, to_uri: str, prune: bool = False, *,
         batch_size: int = 100, manifest_dir: Path | None = None,
         on_progress: Callable[[int, int], None] | None = None, settings: Settings | None = None,
         gate: SyncGate | None = None, busy_wait: float | None = None, replace: bool = False) -> SyncReport:
    """Make the area hold exactly the fact files of `src_dir` that muninn owns there.

    A file the server holds at one of those paths with bytes muninn did not write (a reader's edit,
    or someone else's file) is a conflict: left as it is and named, unless `replace`.

    `src_dir` is a folder, read here; or what a gate already passed (`SyncGate.check`), uploaded as
    it was read and gated. With `gate`, a folder's bytes are gated first (`sync_gate`): a refusal
    raises SyncRefused (exit 3) before anything is written. With `settings`, the after-sync hooks (e.g.
    the search plugin's keyword index) hear what was written and removed. Writes wait up to
    `busy_wait` seconds (default: settings.server.busy_wait) while the server says it is busy."""
    to_uri = check_area(to_uri)
    if busy_wait is None:
        busy_wait = settings.server.busy_wait if settings is not None else 120.0
    if isinstance(src_dir, Passed):
        src_dir, local = src_dir.root, src_dir.files
    else:
        local = local_files(Path(src_dir))
        if gate is not None:
            gate.check([(Path(src_dir), local)])
    if prune and not local:
        # An empty or mistyped folder with --prune would delete everything muninn ever wrote here.
        raise ConfigError("refusing to prune from a folder without fact files", path=str(src_dir),
                          fix="check the folder; to empty the area, remove its files explicitly")
    # Without settings there is no `home:` to honour: $MUNINN_HOME or the XDG default.
    workspace = settings.paths if settings is not None else Workspace(paths.home())
    manifest = Manifest.for_target(client, to_uri, manifest_dir or workspace.sync_manifests)
    with manifest.locked():
        return _sync_locked(client, manifest, to_uri, local, prune, batch_size, busy_wait, on_progress, settings,
                            replace)


def _as_embedded(settings: Settings, data: bytes) -> str:
    """What the door reads of a fact file (its passage prompt before it): what may be billed."""
    from muninn.core import embed_prompts

    return embed_prompts.for_settings(settings.embed).passage + data.decode("utf-8", "replace")


def _unwrite(client: OpenViking, manifest: Manifest, to_uri: str, batch: dict[str, bytes], busy_wait: float) -> None:
    """The embedding door refused this batch's vectors at the billed-token cap: OpenViking keeps the files
    but cannot find them by meaning, and a rerun would see its own bytes and skip them. So they go, and a
    rerun (the cap raised) writes and embeds exactly this batch again; every earlier batch stays."""
    for rel in batch:
        with suppress(NotFound):
            while_busy(partial(client.rm, f"{to_uri}/{rel}"), busy_wait)
        manifest.pending.pop(rel, None)
    manifest.save()


def _sync_locked(client: OpenViking, manifest: Manifest, to_uri: str, local: dict[str, bytes], prune: bool,
                 batch_size: int, busy_wait: float, on_progress: Callable[[int, int], None] | None,
                 settings: Settings | None, replace: bool) -> SyncReport:
    report = SyncReport(manifest=manifest.path)
    while_busy(partial(client.ensure_dir, to_uri), busy_wait)
    remote = remote_files(client, to_uri)
    owned = manifest.owned()
    workers = settings.search.fetch_workers if settings is not None else 8
    vanished = sorted(manifest.owned() - set(local)) if prune else []

    # Every path sync would overwrite or remove is read first: only bytes muninn wrote may go.
    at_risk = [rel for rel, data in local.items()
               if rel in remote and not (rel in owned and manifest.files.get(rel) == sha(data))]
    at_risk += [rel for rel in vanished if rel in remote]
    held = {uri[len(to_uri) + 1:]: data for uri, data in
            read_many(client, [f"{to_uri}/{rel}" for rel in at_risk], workers).items()}

    todo: dict[str, bytes] = {}
    for rel, data in local.items():
        digest = sha(data)
        if rel not in held:      # not on the server, or unchanged on both sides
            if rel in owned and manifest.files.get(rel) == digest and rel in remote:
                report.unchanged += 1
            else:
                todo[rel] = data
        elif held[rel] == data:
            manifest.files[rel] = digest      # already our bytes (a lost manifest, a rerun): adopt
            manifest.pending.pop(rel, None)
            report.unchanged += 1
        elif replace or (rel in owned and manifest.wrote(rel, held[rel])):
            todo[rel] = data
        else:
            report.conflicts.append(rel)
            if rel in owned:
                report.edited.append(rel)
    if report.unchanged:
        manifest.save()

    items = sorted(todo.items())
    written: dict[str, str] = {}
    removed: list[str] = []
    done = 0
    for start in range(0, len(items), batch_size):
        batch = dict(items[start:start + batch_size])
        capped = settings is not None and settings.embed.max_billed_tokens is not None
        if capped and (short := billing.would_cross(settings, [_as_embedded(settings, d) for d in batch.values()])):
            raise short     # every earlier batch is written, embedded and in the manifest: a rerun resumes here
        manifest.pending.update({rel: sha(data) for rel, data in batch.items()})
        manifest.save()
        files = {f"{to_uri}/{rel}": data.decode("utf-8") for rel, data in batch.items()}
        sent = time.time()
        result = while_busy(partial(client.batch_write, to_uri, files, mode="replace", wait=True), busy_wait)
        if settings is not None and (refused := billing.refused_since(settings, sent)):
            _unwrite(client, manifest, to_uri, batch, busy_wait)
            raise refused
        confirmed = _confirmed(result, to_uri, batch)
        for rel in confirmed:
            manifest.files[rel] = manifest.pending.pop(rel)
            written[f"{to_uri}/{rel}"] = batch[rel].decode("utf-8")
        manifest.save()
        done += len(batch)
        report.written += len(confirmed)
        if on_progress:
            on_progress(done, len(items))

    if vanished:
        for i, rel in enumerate(vanished, 1):
            if rel in held and not replace and not manifest.wrote(rel, held[rel]):
                report.conflicts.append(rel)      # a reader's edit of a fact whose source went: kept
                report.edited.append(rel)
                continue
            if rel in remote:
                while_busy(partial(client.rm, f"{to_uri}/{rel}"), busy_wait)
                removed.append(f"{to_uri}/{rel}")
                report.removed += 1
            manifest.files.pop(rel, None)
            manifest.pending.pop(rel, None)
            if i % batch_size == 0:
                manifest.save()  # a kill mid-prune re-removes at most one batch (rm of a gone file is fine)
        manifest.save()
    report.conflicts.sort()
    report.edited.sort()

    client.wait()
    present = remote_files(client, to_uri)
    # Pending entries that are still wanted were not confirmed by the server: they count as missing.
    # A kept conflict is not ours to count.
    expected = (set(manifest.files) | (set(manifest.pending) & set(local))) - set(report.conflicts)
    report.missing = sorted(rel for rel in expected if rel not in present)
    report.missing_after_wait = len(report.missing)
    if settings is not None and (written or removed):
        registry.after_sync(settings, to_uri, written, removed)
    return report


def _confirmed(result: object, to_uri: str, batch: dict[str, bytes]) -> list[str]:
    """The paths the server says it wrote. An answer without the lists confirms the whole batch."""
    if not isinstance(result, dict) or not any(k in result for k in ("created", "updated", "unchanged")):
        return list(batch)
    done = {u for k in ("created", "updated", "unchanged") for u in (result.get(k) or [])}
    return [rel for rel in batch if f"{to_uri}/{rel}" in done]


def sync_all(client: OpenViking, settings: Any, prune: bool = False,
             on_progress: Callable[[int, int], None] | None = None, replace: bool = False) -> dict[str, SyncReport]:
    """Sync every area that `sources:` names, from where `export all` put its files. Every area is
    read once and gated before any is uploaded (`sync_gate`), and what is uploaded is the bytes gated.
    An area not exported yet fails in its turn, as a folder sync would."""
    from muninn.export.pipeline import area_dir, configured

    folders = {area: area_dir(settings, area) for area in sorted({c.area for c in configured(settings)})}
    gate = SyncGate.from_settings(settings)
    passed = {p.root: p for p in gate.check([(d, local_files(d)) for d in folders.values() if d.is_dir()])}
    return {area: sync(client, passed.get(folder, folder), area, prune, batch_size=settings.export.batch_size,
                       manifest_dir=settings.paths.sync_manifests, on_progress=on_progress, settings=settings,
                       gate=gate, replace=replace)
            for area, folder in folders.items()}
