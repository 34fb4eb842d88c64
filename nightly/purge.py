"""`muninn leak purge`: clean what the server leak scan found.

A file muninn owns (a sync manifest says muninn wrote it) is removed: the next `sync all`
re-exports it through redaction and the leak gate. Any other file (an agent's note, an assistant's
write) is rewritten redacted in place: retired values by the span their hash matched, then live
values and patterns through the one redaction path. Each write is tried with every key that can
see the file, retrying the server's busy / CONFLICT answers with backoff, and then read back and
scanned again: only a clean read-back counts as purged.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.core.errors import AuthError, MuninnError, NotFound, ServerError
from muninn.export.pipeline import configured
from muninn.export.sync import Manifest
from muninn.guards.known.forms import ENCODINGS
from muninn.guards.redact.allowlist import Allowlist
from muninn.guards.redact.patterns import PatternScanner
from muninn.guards.redact.redactor import Redactor, marker
from muninn.guards.rules import all_rules
from muninn.guards.undeclared import detect as undeclared
from muninn.nightly import server_scan

BACKOFF = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
_BUSY = ("busy", "conflict", "409", "locked")


@dataclass
class Purged:
    uri: str
    action: str        # "removed" | "redacted" | "would remove" | "would redact" | "reported" | "failed"
    reason: str = ""
    text: str | None = None     # what a "redacted" file now holds (for the readers' local copies)

    def to_json(self) -> dict[str, Any]:
        return {"uri": self.uri, "action": self.action, "reason": self.reason}


@dataclass
class PurgeReport:
    scan: server_scan.ScanReport
    files: list[Purged] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(p.action != "failed" for p in self.files)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "scan": self.scan.to_json(), "files": [p.to_json() for p in self.files]}


def retry_busy(fn: Callable[[], Any], sleep: Callable[[float], None] = time.sleep,
               backoff: tuple[float, ...] = BACKOFF) -> Any:
    """Call `fn`, waiting and retrying while the server says the path is busy (mid-ingest)."""
    for delay in (*backoff, None):
        try:
            return fn()
        except ServerError as exc:
            busy = exc.status == 409 or any(w in str(exc).lower() for w in _BUSY)
            if not busy or isinstance(exc, AuthError | NotFound) or delay is None:
                raise
            sleep(delay)
    raise AssertionError("unreachable")


def redacted(text: str, finding: server_scan.FileFinding, redactor: Redactor) -> str:
    return redact_spans(text, [(f["start"], f["end"], f["secret_id"]) for f in finding.findings if "start" in f],
                        redactor)


def redact_spans(text: str, spans: Iterable[tuple[int, int, str]], redactor: Redactor) -> str:
    """Retired values by the spans their hashes matched, then live values and patterns by `redactor`."""
    spans = sorted(set(spans), reverse=True)
    last = len(text) + 1
    for start, end, secret_id in spans:       # from the end, so earlier offsets stay valid
        if end <= last:
            text = text[:start] + marker(secret_id) + text[end:]
            last = start
    return redactor.redact(text).text


def readers_redactor(settings: Settings, known: dict[str, str]) -> Redactor:
    """The redaction for text a reader wrote (purge rewrites it, restore puts it back): every form of every
    known value, and the pattern rules, without the undeclared-secret detector (its findings are
    reported: a false positive must never rewrite what a reader wrote). What the owner allowed stays."""
    allowed = Allowlist.load(settings.paths.redact_allowlist)
    return Redactor(known, encodings=ENCODINGS, views=True, scanner=PatternScanner(
        [r for r in all_rules().values() if r.name != undeclared.RULE]),
                    allow=allowed.allows if allowed.entries else None)


def owned_uris(settings: Settings) -> set[str]:
    """Every URI a sync manifest of the CLI's identity says muninn wrote."""
    if not settings.sources:
        return set()
    out: set[str] = set()
    with OpenViking.user(settings) as client:
        for area in {c.area for c in configured(settings)}:
            manifest = Manifest.for_target(client, area, settings.paths.sync_manifests)
            out |= {f"{area}/{rel}" for rel in manifest.owned()}
    return out


def purge(settings: Settings, dry_run: bool = False, sleep: Callable[[float], None] = time.sleep) -> PurgeReport:
    scanner = server_scan.Scanner(settings)
    report = PurgeReport(server_scan.scan(settings, scanner))
    if not report.scan.found:
        return report
    own = settings.openviking.account
    owned = owned_uris(settings)
    redactor = readers_redactor(settings, scanner.known)
    clients: dict[str, OpenViking] = {}
    idents = {i.label: i for i in server_scan.identities(settings)}
    try:
        for finding in report.scan.found:
            if all(f["reason"] in server_scan.REPORT_ONLY for f in finding.findings):
                report.files.append(Purged(finding.uri, "reported", "an undeclared secret: declare it "
                                           "(`muninn secret add`) or allow it (`muninn redact review`)"))
                continue
            remove = finding.account == own and finding.uri in owned
            if dry_run:
                report.files.append(Purged(finding.uri, "would remove" if remove else "would redact"))
                continue
            labels = [*finding.seen_as, *(n for n, i in idents.items()
                                          if i.account == finding.account and n not in finding.seen_as)]
            report.files.append(_purge_one(settings, finding, remove, labels, idents, clients, scanner, redactor,
                                           sleep))
    finally:
        for c in clients.values():
            c.close()
    _local_copies(settings, report)
    return report


def _local_copies(settings: Settings, report: PurgeReport) -> None:
    """The readers' keyword indexes and vector caches hold copies of what was purged: they follow at once."""
    from muninn.plugins.search import reader_index

    rewritten = {p.uri: p.text for p in report.files if p.action == "redacted" and p.text is not None}
    removed = [p.uri for p in report.files if p.action == "removed"]
    if rewritten or removed:
        reader_index.forget(settings, rewritten, removed, reader_index.policy_or_none(settings))
    if rewritten or removed:
        # The audit log names the URIs agents read: one that holds a value is scrubbed there too.
        from muninn.plugins.mcp import audit
        from muninn.plugins.mcp.redaction import ValueRedactor

        audit.purge_uris(settings.paths.audit_log, [*rewritten, *removed],
                         lambda: ValueRedactor.from_settings(settings).scrub_all)


def _purge_one(settings: Settings, finding: server_scan.FileFinding, remove: bool, labels: list[str],
               idents: dict[str, server_scan.Identity], clients: dict[str, OpenViking],
               scanner: server_scan.Scanner, redactor: Redactor, sleep: Callable[[float], None]) -> Purged:
    reasons: list[str] = []
    for label in labels:
        if label not in clients:
            client = server_scan.connect(settings, idents[label])
            if client is None:
                continue
            clients[label] = client
        client = clients[label]
        try:
            _clean(client, finding, remove, redactor, sleep)
            return _confirm(client, finding.uri, remove, scanner, sleep)
        except AuthError:
            reasons.append(f"{label}: may not write")
        except MuninnError as exc:
            return Purged(finding.uri, "failed", str(exc))
    return Purged(finding.uri, "failed", "; ".join(reasons) or "no key in the keyring can reach it")


def _clean(client: OpenViking, finding: server_scan.FileFinding, remove: bool, redactor: Redactor,
           sleep: Callable[[float], None]) -> None:
    if remove:
        retry_busy(lambda: client.rm(finding.uri), sleep)
        return
    clean = redacted(retry_busy(lambda: client.read(finding.uri), sleep), finding, redactor)
    retry_busy(lambda: client.write(finding.uri, clean, mode="replace", wait=True), sleep)


def _confirm(client: OpenViking, uri: str, removed: bool, scanner: server_scan.Scanner,
             sleep: Callable[[float], None]) -> Purged:
    try:
        text = retry_busy(lambda: client.read(uri), sleep)
    except NotFound:
        return Purged(uri, "removed") if removed else Purged(uri, "failed", "gone after the rewrite")
    if removed:
        return Purged(uri, "failed", "still there after rm")
    left = [f for f in scanner.scan(uri, text) if f["reason"] not in server_scan.REPORT_ONLY]
    if left:
        ids = sorted({f"{f['reason']}:{f['secret_id'] or ''}" for f in left})
        return Purged(uri, "failed", f"read back still holds {', '.join(ids)}")
    return Purged(uri, "redacted", text=text)
