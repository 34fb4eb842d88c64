"""A leak scan of what is stored in OpenViking, not of what muninn meant to send.

Agents and assistant sessions write straight into the server, and anything can bypass export, so
the nightly scan reads every file back and checks it with the independent leak gate (every live
known value in every form, and every pattern rule) and with the ledger of retired values
(`guards/known/retired.py`). With ACLs on, one key does not see every area, so the tree is walked as the CLI's
own user and then as each policy reader whose key is in the keyring, over that reader's areas.
Files are told apart by account and URI, so a file seen by two keys is read once.

Findings carry the URI, the secret id or rule, and the line. Never a value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from muninn.core import credentials, policy
from muninn.core.client import Entry, OpenViking
from muninn.core.config import Settings
from muninn.core.errors import AuthError, ConfigError, NotFound
from muninn.guards.gate.leak_gate import LeakGate
from muninn.guards.known.forms import ENCODINGS
from muninn.guards.known.retired import Ledger
from muninn.guards.known.secret_values import known as known_values
from muninn.guards.known.secret_values import retired as retired_values
from muninn.guards.redact.allowlist import Allowlist, gate_allow
from muninn.guards.redact.redactor import Redactor
from muninn.guards.undeclared import detect as undeclared
from muninn.nightly.scan_cache import ScanCache, fingerprint

# Findings that are reported and listed in `muninn redact review`, never purged: the detector's.
REPORT_ONLY = frozenset({undeclared.RULE})
# What the CLI's own user walks: every scope OpenViking 0.5.2 serves to a user key.
SCOPES = ("viking://resources", "viking://agent", "viking://user")


@dataclass(frozen=True)
class Identity:
    label: str      # "cli" or the policy reader's name
    account: str
    key_name: str
    roots: tuple[str, ...]
    # The reader's policy decision: a nested area it holds no level in is passed over, not reported
    # unreadable (the server refuses it, as policy.yaml says it should). None: the CLI's, every folder.
    sees: Callable[[str], bool] | None = None


@dataclass
class FileFinding:
    uri: str
    account: str
    seen_as: list[str]
    findings: list[dict[str, Any]]   # {"reason", "secret_id", "line"}; hash hits carry start/end too

    def to_json(self) -> dict[str, Any]:
        return {"uri": self.uri, "account": self.account, "seen_as": self.seen_as,
                "findings": [{k: f[k] for k in ("reason", "secret_id", "line", "fingerprint", "class") if k in f}
                             for f in self.findings]}


@dataclass
class ScanReport:
    files: int = 0
    identities: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)   # "<reader>: <uri>: <reason>"
    retired_known: int = 0
    found: list[FileFinding] = field(default_factory=list)
    unchanged: int = 0      # of `files`: clean last time with the same stamp and fingerprint, not read again
    full: bool = True       # every file was read (first run, new known values or rules, or the weekly one)

    def to_json(self) -> dict[str, Any]:
        # Not `unchanged` nor `full`: the same tree scans to the same JSON whether or not it was read again.
        return {"files": self.files, "identities": self.identities, "unreadable": self.unreadable,
                "retired_known": self.retired_known, "found": [f.to_json() for f in self.found]}


class Scanner:
    """Live values through the leak gate, retired values through their salted hashes."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.known = known_values(settings)     # value -> secret id
        ledger = Ledger(settings.paths.retired_hashes)
        ledger.remember((i, v) for v, i in self.known.items())
        # A retired value the vault keeps is redacted with the rest (`_values`), but found and reported
        # as a retired value, by its hashes, as before the vault kept it.
        old = retired_values(settings)
        live = {v: i for v, i in self.known.items() if v not in old}
        self.hashes = ledger.retired(live)
        self.gate = LeakGate(live, allow=gate_allow(settings.paths.redact_allowlist))
        self.fingerprint = fingerprint(ledger.salt, self.known, self.hashes.entries,
                                       settings.paths.redact_allowlist)
        # Undeclared secrets: fingerprinted with the allowlist's key, so `redact allow` takes them.
        self.allowlist = Allowlist.load(settings.paths.redact_allowlist)
        self._values = Redactor(self.known, patterns=False, encodings=ENCODINGS)

    def scan(self, uri: str, text: str) -> list[dict[str, Any]]:
        out = [{"reason": f.reason, "secret_id": f.secret_id, "line": f.line} for f in self.gate.scan(text)]
        out += [{"reason": f.reason, "secret_id": f.secret_id, "line": f.line} for f in self.gate.scan_path(uri)]
        out += [{"reason": "retired-value", "secret_id": h.secret_id, "line": h.line, "start": h.start, "end": h.end}
                for h in self.hashes.scan(text)]
        # The gate's own reading and the detector may both see one undeclared secret: the detector's
        # finding (it has the fingerprint) stands for the line; a line only the gate saw stays.
        mine = self.undeclared(text)
        lines = {f["line"] for f in mine}
        out = [f for f in out if f["reason"] != undeclared.RULE or f["line"] not in lines] + mine
        return out

    def undeclared(self, text: str) -> list[dict[str, Any]]:
        """The detector's findings: line, class and fingerprint; the owner's allowlist honoured."""
        found = [f for f in undeclared.find(text) if not self.allowlist.allows(undeclared.RULE, text[f.start:f.end])]
        if found and self.known:
            # A known value is reported as itself (its secret id), not a second time as undeclared.
            known = [(h.start, h.end) for h in self._values.redact_values(text).hits]
            found = [f for f in found if not any(s < f.end and f.start < e for s, e in known)]
        if not found:
            return []
        keyed = self.allowlist.keyed()
        return [{"reason": undeclared.RULE, "secret_id": None, "line": text.count("\n", 0, f.start) + 1,
                 "class": f.why, "fingerprint": keyed.fingerprint(undeclared.RULE, text[f.start:f.end])}
                for f in found]


def identities(settings: Settings) -> list[Identity]:
    own = settings.openviking
    out = [Identity("cli", own.account, credentials.user_key_name(own.account, own.user), SCOPES)]
    try:
        pol = policy.load_for(settings)
    except ConfigError:
        if policy.path_for(settings).exists():
            raise
        return out  # no policy.yaml: one identity, the CLI's
    for name, prof in pol.profiles.items():
        roots = tuple(dict.fromkeys([*prof.read_prefixes, *prof.write_prefixes]))
        out.append(Identity(name, prof.account, prof.key_name, roots,
                            lambda u, p=prof: p.may("read", u) or p.may("write", u)))
    return out


def connect(settings: Settings, ident: Identity) -> OpenViking | None:
    key = credentials.for_server(settings).get(ident.key_name)
    return OpenViking(settings.server.base_url, key, key_name=ident.key_name) if key else None


def walk(client: OpenViking, root: str, refused: Callable[[str], None], sees: Callable[[str], bool] | None = None,
         listed: set[str] | None = None) -> Iterator[Entry]:
    """Every file under `root` this key may list. A folder it may not list goes to `refused`; one it
    listed goes into `listed`; `sees` (when given) says which sub-folders are worth entering."""
    stack = [root.rstrip("/")]
    while stack:
        folder = stack.pop()
        try:
            entries = client.ls(folder)
        except NotFound:
            continue
        except AuthError:
            refused(folder)
            continue
        if listed is not None:
            listed.add(folder)
        for e in entries:
            if e.is_dir:
                if sees is None or sees(e.uri):
                    stack.append(e.uri)
            else:
                yield e


def cache_path(settings: Settings) -> Path:
    return settings.paths.nightly_reports / "leak-scan-cache.json"


def scan(settings: Settings, scanner: Scanner | None = None, *, full: bool = False) -> ScanReport:
    """Every file on the server as every identity with a key sees it. Files clean last time under the
    same stamp and fingerprint are counted, not read (nightly.scan_cache); `full` reads them all."""
    scanner = scanner or Scanner(settings)
    cache = ScanCache(cache_path(settings), scanner.fingerprint if not full else "")
    report = ScanReport(retired_known=len(scanner.hashes), full=cache.full)
    seen: dict[tuple[str, str], FileFinding | None] = {}
    for ident in identities(settings):
        client = connect(settings, ident)
        if client is None:
            report.unreadable.append(f"{ident.label}: no key {ident.key_name!r} in the keyring")
            continue
        report.identities.append(ident.label)
        with client:
            for root in ident.roots:
                for entry in walk(client, root, lambda f, who=ident.label: report.unreadable.append(
                        f"{who}: {f}: not readable with this key"), ident.sees):
                    uri = entry.uri
                    key = (ident.account, uri)
                    if key in seen:
                        if seen[key] is not None:
                            seen[key].seen_as.append(ident.label)
                        continue
                    if cache.unchanged(ident.account, uri, entry.stamp):
                        report.files += 1
                        report.unchanged += 1
                        seen[key] = None
                        continue
                    try:
                        text = client.read(uri)
                    except (NotFound, AuthError) as exc:
                        report.unreadable.append(f"{ident.label}: {uri}: {exc.message}")
                        continue
                    report.files += 1
                    findings = scanner.scan(uri, text)
                    seen[key] = FileFinding(uri, ident.account, [ident.label], findings) if findings else None
                    if not findings:
                        cache.clean(ident.account, uri, entry.stamp)
    report.found = [f for f in seen.values() if f is not None]
    if not full:
        cache.save()
    from muninn.guards.undeclared import review

    review.record(settings, "server", [{"file": f.uri, "line": x["line"], "class": x.get("class"), "kind": "pattern",
                                        "rule": undeclared.RULE, "secret_id": None, "fingerprint": x.get("fingerprint")}
                                       for f in report.found for x in f.findings if x["reason"] == undeclared.RULE])
    return report
