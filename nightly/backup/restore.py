"""Put a backup back: one area, or everything (`all`: the local parts too), onto the same server or a
fresh one. Nothing is overwritten silently: a file that is there with other bytes, on the server or
on this host, is named and kept unless `replace`.

Only a sealed backup opens (crypt.py). Every path in it is confined, and every server file passes
the restore gate (gate.py) first: redacted as a reader's text is, read by the leak gate, held
sealed when it fails. Each server file is written with the key of a reader the policy lets write there,
else the CLI's own; then read back and counted. Then every reader's keyword index hears
of what was written (reader_index.after_write) and the search vectors are filled, so a restored fact is
findable at once, not at the next index walk.

On a new host the order is: `muninn up`, `key import --from FILE`, `backup restore FILE --all` (the policy,
the vault store and the other local parts come back; the server files wait for keys), `policy apply`
(mints the readers' keys again), `key import` of the vault key (the gate redacts the vault's values),
`backup restore FILE --all` once more (the server files; the local parts are unchanged).
"""

from __future__ import annotations

import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from muninn.core import atomic, policy
from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.core.errors import AuthError, ExitCode, MuninnError, NotFound
from muninn.export.sync import read_many
from muninn.nightly.backup import archive as backup_archive
from muninn.nightly.backup import gate as backup_gate
from muninn.nightly.backup import parts as backup_parts
from muninn.nightly.backup import server as backup_server
from muninn.nightly.backup.server import area_of
from muninn.nightly.backup.server import policy_areas as backup_policy_areas


class RestoreHeld(MuninnError):
    """The gate held files back (named, sealed in <home>/backups/held/); everything else was restored."""

    exit_code = ExitCode.RESTORE_HELD


class RestoreConflict(MuninnError):
    """Files that are there with other bytes were kept (named), as asked: nothing was overwritten."""

    exit_code = ExitCode.SYNC_CONFLICT


@dataclass
class RestoreReport:
    written: list[str] = field(default_factory=list)        # server URIs
    unchanged: int = 0
    conflicts: list[str] = field(default_factory=list)      # server URIs and local paths, kept
    local: list[str] = field(default_factory=list)          # local files written
    waiting: list[str] = field(default_factory=list)        # server files with no key to write them yet
    writers: dict[str, int] = field(default_factory=dict)   # identity label -> files written
    held: dict[str, list[str]] = field(default_factory=dict)   # server URI -> why the gate held it
    held_in: str | None = None                               # the sealed file that keeps them
    redacted: int = 0                                        # of `written`: changed by redaction
    indexes: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"files": len(self.written), "written": self.written, "unchanged": self.unchanged,
                "conflicts": self.conflicts, "local": self.local, "waiting": self.waiting,
                "as": ", ".join(sorted(self.writers)) or None, "writers": self.writers, "indexes": self.indexes,
                "warnings": self.warnings, "held": self.held, "held_in": self.held_in, "redacted": self.redacted}


def restore(settings: Settings, path: Path, *, area: str | None = None, everything: bool = False,
            replace: bool = False, archive: backup_archive.Archive | None = None,
            allow_unsealed: bool = False) -> RestoreReport:
    archive = archive or open_archive(settings, path, allow_unsealed)
    report = RestoreReport()
    chosen = archive.server_files
    if area is not None:
        area = area.rstrip("/")
        chosen = [f for f in chosen if str(f.get("uri", "")).startswith(area + "/")]
        if not chosen:
            areas = backup_policy_areas(settings)
            known = sorted({area_of(str(f.get("uri")), areas) for f in archive.server_files}) or ["none"]
            raise MuninnError(f"{path} holds no area {area}", fix=f"areas in this backup: {', '.join(known)}")
    # Every path is checked before anything is written, against the policy the restore leaves in force.
    targets = backup_gate.confine_local(settings, archive) if everything else {}
    backup_gate.confine_server(settings, archive, chosen, _policy_after(settings, archive, targets, replace))
    if everything:
        _local(settings, archive, targets, replace, report)
    texts = _server(settings, archive, chosen, replace, report)
    if report.held:
        report.held_in = str(backup_gate.hold(settings, archive, report.held))
    if report.written:
        _refresh(settings, texts, report)
    return report


def raise_for(report: RestoreReport) -> None:
    """The restore's outcome as its exit: files the gate held (23), kept conflicts (19), then files still
    waiting for a key."""
    if report.held:
        raise RestoreHeld(f"restore held back {len(report.held)} file(s) the leak gate refused, kept sealed in "
                          f"{report.held_in}: " + "; ".join(f"{u} ({', '.join(r)})" for u, r in
                                                           list(report.held.items())[:5])
                          + (" …" if len(report.held) > 5 else ""),
                          fix="declare the value (`muninn secret add`) or allow it (`muninn redact review`), then "
                              "`muninn backup restore` that file again")
    if report.conflicts:
        raise RestoreConflict(f"restore kept {len(report.conflicts)} file(s) that differ from the backup: "
                              f"{', '.join(report.conflicts[:5])}" + (" …" if len(report.conflicts) > 5 else ""),
                              fix="compare them with the backup, then rerun with --replace to overwrite")
    if report.waiting:
        raise MuninnError(f"restore wrote the local parts; {len(report.waiting)} server file(s) wait for a key",
                          fix="run `muninn policy apply` (it mints the readers' keys), then the same restore again")


def open_archive(settings: Settings, path: Path, allow_unsealed: bool = False) -> backup_archive.Archive:
    from muninn.nightly.backup import crypt as backup_crypt

    data, sealed = backup_crypt.open_file(settings, path, allow_unsealed)
    archive = backup_archive.Archive.from_bytes(data, str(path), sealed)
    if not archive.sealed and not allow_unsealed:      # held from an unsealed archive: it needs the same ask
        raise backup_archive.BackupRefused(f"{path} holds files held from an unsealed backup",
                                           fix="pass --allow-unsealed to open it, as for the backup it came from")
    return archive


def _policy_after(settings: Settings, archive: backup_archive.Archive, targets: dict[str, Path],
                  replace: bool) -> policy.Policy | None:
    """The policy in force once the local parts are back: the backup's when it will be written, else this
    host's (None: none)."""
    here = policy.path_for(settings)
    rec = next((r for r in archive.local_files if r.get("part") == "policy" and r.get("member") in targets), None)
    if not archive.sealed:
        rec = None            # an unsealed archive's policy is never the one its files are judged by
    if rec is not None and (replace or not here.exists()):
        with tempfile.TemporaryDirectory() as tmp:
            staged = Path(tmp) / here.name
            staged.write_bytes(archive.read(rec["member"]))
            return policy.load(staged)
    return policy.load(here) if here.exists() else None


def _local(settings: Settings, archive: backup_archive.Archive, targets: dict[str, Path], replace: bool,
           report: RestoreReport) -> None:
    parts = backup_parts.parts()
    for rec in archive.local_files:
        part = parts.get(rec["part"])
        if part is None:
            report.warnings.append(f"{rec['member']}: no part {rec['part']!r} on this host; left in the backup")
            continue
        data = archive.read(rec["member"])
        target = targets[rec["member"]]
        if target.is_file():
            now = part.read(target)
            if now == data:
                continue
            if part.merge is not None:
                joined = part.merge(now, data)
                if joined is None:
                    report.warnings.append(f"{target}: kept this host's (the backup's cannot be joined to it)")
                    continue
                data = joined
                if data == now:
                    continue
            elif not replace:
                report.conflicts.append(str(target))
                continue
        atomic.write_bytes(target, data, mode=0o600)
        report.local.append(str(target))


def _writers(settings: Settings) -> tuple[dict[str, OpenViking], policy.Policy | None]:
    """{label: client} for the CLI's identity and every reader whose key is in the keyring."""
    out: dict[str, OpenViking] = {}
    for ident in backup_server.server_scan.identities(settings):
        client = backup_server.server_scan.connect(settings, ident)
        if client is not None:
            out[ident.label] = client
    path = policy.path_for(settings)
    return out, (policy.load(path) if path.exists() else None)


def _writer_for(rec: dict[str, Any], clients: dict[str, OpenViking], pol: policy.Policy | None) -> str | None:
    """The least-privileged reader the policy lets write the file's URI (an agent before the owner: a
    restore must not make an agent's note look like the owner's); the CLI's own identity for a URI
    outside every area. None: no such reader has a key here yet."""
    uri = rec["uri"]
    able = [] if pol is None else [p for p in pol.profiles.values()
                                   if any(uri == w or uri.startswith(w + "/") for w in p.write_prefixes)]
    if not able:
        return "cli" if "cli" in clients else None
    able.sort(key=lambda p: (p.trusted, len(p.write_prefixes), p.name))
    return next((p.name for p in able if p.name in clients), None)


def _server(settings: Settings, archive: backup_archive.Archive, chosen: list[dict[str, Any]], replace: bool,
            report: RestoreReport) -> dict[str, str]:
    """Write the chosen files that pass the gate; returns {uri: the text written} (redacted)."""
    if not chosen:
        return {}
    clients, pol = _writers(settings)
    areas = list(pol.areas.values()) if pol is not None else []
    by_writer: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for rec in chosen:
        label = _writer_for(rec, clients, pol)
        if label is None:
            report.waiting.append(rec["uri"])
        else:
            by_writer[label].append(rec)
    out: dict[str, str] = {}
    try:
        # After the local parts (the vault and the retired hashes are back); only when a file can be written.
        gate = backup_gate.RestoreGate(settings) if by_writer else None
        for label, recs in by_writer.items():
            client = clients[label]
            held = read_many(client, [r["uri"] for r in recs], settings.search.fetch_workers, (NotFound, AuthError))
            todo: dict[str, dict[str, str]] = defaultdict(dict)
            for rec in recs:
                data = archive.read(rec["member"])
                verdict = gate.check(rec["uri"], data)  # type: ignore[union-attr]
                if verdict.text is None:
                    report.held[rec["uri"]] = verdict.reasons
                    continue
                clean, now = verdict.text.encode("utf-8"), held.get(rec["uri"])
                if now in (clean, data):
                    report.unchanged += 1
                elif now is not None and not replace:
                    report.conflicts.append(rec["uri"])
                else:
                    todo[area_of(rec["uri"], areas)][rec["uri"]] = verdict.text
                    report.redacted += clean != data
            for root, files in sorted(todo.items()):
                _write(client, root, files)
                report.written += sorted(files)
                report.writers[label] = report.writers.get(label, 0) + len(files)
                out.update(files)
    finally:
        for client in clients.values():
            client.close()
    report.written.sort()
    return out


def _write(client: OpenViking, root: str, files: dict[str, str], batch: int = 100) -> None:
    from muninn.export.sync import while_busy

    while_busy(lambda: client.ensure_dir(root), 120.0)
    items = sorted(files.items())
    for start in range(0, len(items), batch):
        part = dict(items[start:start + batch])
        while_busy(lambda part=part: client.batch_write(root, part, wait=True), 120.0)
    client.wait()
    back = {e.uri for e in client.walk(root)}
    missing = sorted(set(files) - back)
    if missing:
        raise MuninnError(f"restore of {root}: {len(missing)} of {len(files)} file(s) not there after writing",
                          fix="check the server log (`muninn status`) and run the restore again")


def _refresh(settings: Settings, texts: dict[str, str], report: RestoreReport) -> None:
    """Every reader's keyword index and search vectors, for what was just written (as written: redacted)."""
    from muninn.nightly.jobs.refresh import fill_vectors
    from muninn.plugins.search import reader_index

    report.indexes = reader_index.after_write(settings, texts, [], reader_index.policy_or_none(settings))
    data: dict[str, Any] = {}
    failures: list[str] = []
    fill_vectors(settings, data, failures)
    report.warnings += [f"{f}: run `muninn nightly --only refresh` once the sidecar is up" for f in failures]
