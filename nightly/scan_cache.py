"""What last night's server leak scan found clean, so tonight's reads only what changed.

A file is skipped when the listing shows the same size and modTime as when it was read and found
clean, and the scan checks for the same things: the same known values, the same retired-value
hashes, the same allowlist and the same rule code. Any change to those (a secret added to a vault or
a secrets file, a value retired, the allowlist edited, muninn upgraded) is a new fingerprint and a
full rescan. A full rescan also runs every FULL_EVERY, in case a server ever keeps a file's size and
modTime across a rewrite. Files with findings are never cached: they are read, and reported, every
night until purged.

The cache holds URIs, stamps and one keyed hash over the known set, never a value.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from muninn import __version__
from muninn.core import atomic

FULL_EVERY = dt.timedelta(days=7)
_GUARDS = Path(__file__).resolve().parents[1] / "guards"
# The code that decides what a finding is: a change in any of it is a change in what "clean" means.
# Each pattern names at least one file (tests/test_scan_cache.py): a room moved must be followed here.
_RULE_FILES = ("redact/allowlist.py", "gate/leak_gate.py", "redact/patterns.py", "known/forms.py", "known/dumps.py",
               "known/retired.py", "known/secret_values.py", "rules/*.py", "undeclared/detect.py",
               "undeclared/credential_options.py", "undeclared/credential_words.py", "gate/gate_undeclared.py")


def fingerprint(salt: bytes, known: Mapping[str, str], retired: Iterable[str], allowlist: Path | None = None) -> str:
    """One keyed hash (the retired ledger's salt: a short value cannot be guessed from the cache) over
    what the scan looks for: the known values with their ids, the retired-value hashes, the redaction
    allowlist, muninn's version and the rule code."""
    h = hmac.new(salt, __version__.encode(), hashlib.sha256)
    if allowlist is not None and allowlist.is_file():
        h.update(b"\x00a" + allowlist.read_bytes())
    for value, secret_id in sorted(known.items()):
        h.update(b"\x00k" + value.encode() + b"\x00" + secret_id.encode())
    for digest in sorted(retired):
        h.update(b"\x00r" + digest.encode())
    for pattern in _RULE_FILES:
        for path in sorted(_GUARDS.glob(pattern)):
            h.update(b"\x00f" + path.read_bytes())
    return h.hexdigest()


class ScanCache:
    """{(account, uri): stamp} of files found clean under one fingerprint."""

    def __init__(self, path: Path, fingerprint: str, now: dt.datetime | None = None) -> None:
        self.path = path
        self.fingerprint = fingerprint
        self.now = now or dt.datetime.now(dt.UTC)
        data = self._read()
        full_at = data.get("full_at")
        fresh = (data.get("fingerprint") == fingerprint and full_at is not None
                 and self.now - dt.datetime.fromisoformat(full_at) < FULL_EVERY)
        self.full = not fresh          # this scan reads every file
        self._old: dict[str, str] = data.get("clean", {}) if fresh else {}
        self._full_at = full_at if fresh else self.now.isoformat(timespec="seconds")
        self._clean: dict[str, str] = {}
        self.skipped = 0

    def _read(self) -> dict:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}                 # none yet, or unreadable: a full scan rebuilds it
        return data if isinstance(data, dict) else {}

    @staticmethod
    def _key(account: str, uri: str) -> str:
        return f"{account}\t{uri}"

    def unchanged(self, account: str, uri: str, stamp: str | None) -> bool:
        """True when this file was clean under the same stamp last time (and stays recorded as clean)."""
        key = self._key(account, uri)
        if stamp is not None and self._old.get(key) == stamp:
            self._clean[key] = stamp
            self.skipped += 1
            return True
        return False

    def clean(self, account: str, uri: str, stamp: str | None) -> None:
        if stamp is not None:
            self._clean[self._key(account, uri)] = stamp

    def save(self) -> None:
        """Only what was seen tonight: a file gone from the server drops out."""
        atomic.write_text(self.path, json.dumps({"fingerprint": self.fingerprint, "full_at": self._full_at,
                                                 "clean": self._clean}), mode=0o600)
