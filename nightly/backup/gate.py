"""The restore gate: what a backup puts back passes the checks a sync passes, and lands only where it
was taken from.

Where. Every record of an archive's index is checked before anything is written: a server file's
member is the one its account and URI name, its URI is already canonical (guards/policy/uri.py) under a scope
the CLI walks, and the identity that read it could read it under the policy in force (a file an agent
read lies in an area the agent reads; a file outside every area was read by the CLI). An unsealed
archive (opened only by name) vouches for nothing, so its files go back only into areas whose text
other readers already read as untrusted data. A local part's
file goes to its part's own file or folder, resolved, never through a symlink. One record that fails
refuses the whole restore (exit 22) with nothing written: an index that points elsewhere is a forged
or broken one, and the archive keeps everything.

What. A server file's text is redacted as purge redacts a reader's text (retired values by their
hashed spans, then every form of every known value and the pattern rules), then read by the leak gate
(its own patterns, its own undeclared reading, known values in the text and in the URI) and the
retired-value hashes again. What passes is written as redacted, and compared redacted, so a restore
after a purge finds the purged file unchanged. What fails is held: sealed with the backup key into
<home>/backups/held/ and named with its reasons (secret ids, rule names; never a value), exit 23.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from muninn.core import policy
from muninn.core.config import Settings
from muninn.core.errors import CredentialError
from muninn.guards.gate.leak_gate import KNOWN_VALUE
from muninn.guards.policy.uri import UriRejected, canonicalize
from muninn.guards.redact.redactor import Redactor
from muninn.nightly import server_scan
from muninn.nightly.backup import archive as backup_archive
from muninn.nightly.backup import crypt as backup_crypt
from muninn.nightly.backup import parts as backup_parts
from muninn.nightly.purge import readers_redactor, redact_spans


def _refuse(problems: list[str], source: str) -> None:
    if problems:
        more = f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""
        raise backup_archive.BackupRefused(
            f"{source} was refused, nothing written: {'; '.join(problems[:5])}{more}",
            fix="this backup's index points outside what a backup holds: use another backup")


def confine_local(settings: Settings, archive: backup_archive.Archive) -> dict[str, Path]:
    """{member: target} for every local file of the archive whose part this host has; BackupRefused when
    any target leaves its part's file or folder."""
    parts = backup_parts.parts()
    out: dict[str, Path] = {}
    problems: list[str] = []
    for rec in archive.local_files:
        member, name, rel = str(rec.get("member")), str(rec.get("part")), str(rec.get("rel"))
        part = parts.get(name)
        if part is None:
            continue
        if not archive.sealed:
            # The policy, the allowlist, approved skills, manifests: state that decides what others may do.
            problems.append(f"{member}: an unsealed backup cannot vouch for local state (restore its agents' "
                            "areas with --to instead)")
            continue
        if member not in archive.members:
            problems.append(f"{member}: named in the index, missing from the archive")
            continue
        if archive.index.get("format", 1) >= 2 and member != backup_archive.local_member(name, rel):
            problems.append(f"{member}: not the member its part and path name")
            continue
        try:
            out[member] = part.confined_target(settings, rel)
        except ValueError as exc:
            problems.append(f"{member}: {exc}")
    _refuse(problems, archive.source)
    return out


def confine_server(settings: Settings, archive: backup_archive.Archive, chosen: list[dict[str, Any]],
                   pol: policy.Policy | None) -> None:
    """BackupRefused when a chosen server file lies outside what the identity that read it could read
    under `pol` (the policy in force once the restore's local parts are back)."""
    problems = [f"{rec.get('member')}: {why}" for rec in chosen
                if (why := _server_problem(settings, archive, rec, pol))]
    _refuse(problems, archive.source)


def _server_problem(settings: Settings, archive: backup_archive.Archive, rec: dict[str, Any],
                    pol: policy.Policy | None) -> str | None:
    uri, account, read_as = str(rec.get("uri")), str(rec.get("account")), str(rec.get("read_as"))
    if rec.get("member") not in archive.members:
        return "named in the index, missing from the archive"
    try:
        canonical = canonicalize(uri)
    except UriRejected as exc:
        return f"the URI is refused ({exc.reason})"
    if canonical != uri or not any(uri.startswith(scope + "/") for scope in server_scan.SCOPES):
        return "the URI is not in canonical form under viking://resources, agent or user"
    if archive.index.get("format", 1) >= 2 and rec.get("member") != backup_archive.server_member(account, uri):
        return "not the member its account and URI name"
    if not archive.sealed and (pol is None or not pol.untrusted_writers(uri)):
        return ("an unsealed backup cannot vouch for who wrote a file: it goes back only into an area whose "
                "text other readers already read as data (an agent's)")
    if read_as == "cli":
        if account and account != settings.openviking.account:
            return f"read as the CLI, but of account {account!r}, not {settings.openviking.account!r}"
        return None
    reader = pol.profiles.get(read_as) if pol is not None else None
    if reader is None:
        return f"read as {read_as!r}, who is not a reader in policy.yaml (add it back, then restore)"
    if account and account != reader.account:
        return f"read as {read_as!r}, whose account is {reader.account!r}, not {account!r}"
    if not reader.may("read", uri):
        return f"outside every area {read_as!r} may read: not where a backup read as it could come from"
    return None


@dataclass
class Verdict:
    text: str | None                                   # what to write, redacted; None: held
    reasons: list[str] = field(default_factory=list)   # why held: rule names and secret ids, never values


class RestoreGate:
    """One restore's gate: the known and retired values are read once."""

    def __init__(self, settings: Settings) -> None:
        try:
            self.scanner = server_scan.Scanner(settings)
        except CredentialError as exc:
            raise CredentialError(f"the restore gate cannot read the known values it must redact ({exc.message})",
                                  fix="import the vault key (`muninn key import vault.muninn-key`), then the same "
                                      "restore again") from None
        self.redactor: Redactor = readers_redactor(settings, self.scanner.known)

    def name_values(self, uri: str) -> set[str]:
        """Secret ids whose value the redactor's value pass (what the text is redacted by) reads in `uri`:
        the whole URI and each of its parts, so an encoded run starts where a name does."""
        pieces = {uri, *uri.split("/")}
        pieces |= {p.rsplit(".", 1)[0] for p in pieces if "." in p}
        return {h.secret_id for p in pieces if p for h in self.redactor.redact_values(p).hits}

    def check(self, uri: str, data: bytes) -> Verdict:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return Verdict(None, ["not UTF-8 text"])
        spans = [(h.start, h.end, h.secret_id) for h in self.scanner.hashes.scan(text)]
        clean = redact_spans(text, spans, self.redactor)
        found = self.scanner.gate.scan(clean) + self.scanner.gate.scan_path(uri)
        # The name too, by the readers the text goes through (the gate's and the redactor's value pass, one
        # reader for text and name): a known value base64- or hex-encoded in a file name, and a retired one.
        found += [f for f in self.scanner.gate.scan(uri) if f.reason == KNOWN_VALUE]
        reasons = sorted({f"{f.reason}:{f.secret_id}" if f.secret_id else f.reason for f in found})
        reasons += sorted({f"known-value-in-path:{sid}" for sid in self.name_values(uri)})
        reasons += sorted({f"retired-value:{h.secret_id}" for h in self.scanner.hashes.scan(clean)})
        reasons += sorted({f"retired-value-in-path:{h.secret_id}" for h in self.scanner.hashes.scan(uri)})
        return Verdict(None, reasons) if reasons else Verdict(clean)


def hold(settings: Settings, archive: backup_archive.Archive, held: dict[str, list[str]]) -> Path:
    """The held server files (uri -> reasons), sealed with the backup key into <home>/backups/held/: a
    backup of its own, which `backup restore` takes again once they pass."""
    records = [r for r in archive.server_files if r["uri"] in held]
    members = {r["member"]: archive.read(r["member"]) for r in records}
    # Sealing them here must not vouch for them: a held file from an unsealed archive opens as unsealed.
    index = {"created": datetime.now(UTC).isoformat(timespec="seconds"), "held_from": Path(archive.source).name,
             "server_files": records, "local_files": [], "held": held, "unsealed_origin": not archive.sealed}
    out = settings.paths.backups / "held"
    for folder in (settings.paths.backups, out):
        if folder.is_symlink():
            raise backup_archive.BackupRefused(f"{folder} is a symlink: held files are never written through one",
                                               fix=f"remove the link ({folder}), then restore again")
    out.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = out / f"muninn-held-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S.%fZ')}.mbk"
    backup_archive.write_private(path, backup_crypt.seal(settings, backup_archive.pack(members, index), path.name))
    return path

