"""The owner's allowlist of pattern false positives: a file of fingerprints, never of values.

    {"version": 1, "salt": "<hex>", "allowed": [{"fingerprint": "auth-header:<hex>", "rule": "auth-header",
                                                 "added": "<ISO time>", "note": "..."}]}

A fingerprint is `<rule>:<keyed BLAKE2b of the matched text>`: it names the rule and the exact text
a pattern matched, so allowing "testab12cd34" (auth-header: a documented fixture token) allows that
text for that rule and nothing else. The key (`salt`) is random per file, so a fingerprint printed in an export report
cannot be checked against a guessed password without the file (0600).

What it never does:
- **No inline switch.** Only this file allows anything. A comment in a note (`pragma: allowlist
  secret`, `gitleaks:allow`, `# nosec`) is text an agent can write; detect-secrets' own pragma filter
  is off (guards/redact/patterns.py) and nothing here reads notes.
- **No known values.** The value pass (guards/redact/redactor.py) runs before patterns and ignores this file;
  `muninn redact allow` refuses a fingerprint that is a known value's under any rule, and the leak
  gate never lets a known value through whatever this file says.

The redactor honours an entry for its rule and text, wherever it runs: export, and the MCP server's
pattern pass (what an agent writes, the audit log) through the same `Redactor.for_facts`. The leak
gate (its own patterns, its own rule names) honours the same file by the text's hash alone: it skips
a pattern finding whose matched text the owner allowed, and flags everything else, so where the two
disagree on a match the gate fails closed. This module owns the file format; neither matcher's code is shared.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from muninn.core import atomic
from muninn.core.errors import ConfigError
from muninn.guards.known.forms import ENCODINGS, forms_of

VERSION = 1
DIGEST_BYTES = 12
_FINGERPRINT = re.compile(rf"^(?P<rule>[A-Za-z0-9][A-Za-z0-9:_.-]{{0,80}}):(?P<hash>[0-9a-f]{{{2 * DIGEST_BYTES}}})$")


def split(fingerprint: str) -> tuple[str, str] | None:
    """(rule, hash) of a well-formed fingerprint, else None."""
    m = _FINGERPRINT.match(fingerprint.strip())
    return (m.group("rule"), m.group("hash")) if m else None


@dataclass
class Allowlist:
    path: Path
    salt: bytes | None = None
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)   # fingerprint -> entry

    @classmethod
    def load(cls, path: Path) -> Allowlist:
        """The file as it is; a missing file allows nothing (and has no key until `keyed()`)."""
        if not path.exists():
            return cls(path)
        try:
            data = json.loads(path.read_text())
            salt = bytes.fromhex(data["salt"])
            entries = {e["fingerprint"]: dict(e) for e in data.get("allowed", [])}
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(f"the redaction allowlist is unreadable ({type(exc).__name__})", path=str(path),
                              fix="restore it from a backup, or delete it and allow the fingerprints again") from None
        if len(salt) < 16 or any(split(fp) is None for fp in entries):
            raise ConfigError("the redaction allowlist holds a malformed key or fingerprint", path=str(path),
                              fix="restore it from a backup, or delete it and allow the fingerprints again")
        return cls(path, salt, entries)

    def keyed(self) -> Allowlist:
        """The same list with a key, created (and the file written, 0600) on first need: an export
        needs one to print fingerprints."""
        if self.salt is None:
            self.salt = os.urandom(32)
            self.save()
        return self

    def save(self) -> None:
        assert self.salt is not None
        data = {"version": VERSION, "salt": self.salt.hex(),
                "allowed": sorted(self.entries.values(), key=lambda e: e["fingerprint"])}
        atomic.write_text(self.path, json.dumps(data, indent=1) + "\n", mode=0o600)

    def digest(self, text: str) -> str | None:
        if self.salt is None:
            return None
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), key=self.salt, digest_size=DIGEST_BYTES,
                               person=b"muninn-allow").hexdigest()

    def fingerprint(self, rule: str, text: str) -> str | None:
        digest = self.digest(text)
        return f"{rule}:{digest}" if digest else None

    def allows(self, rule: str, text: str) -> bool:
        """The redactor's question: this rule's match of exactly this text was allowed."""
        return bool(self.entries) and self.fingerprint(rule, text) in self.entries

    def redactor_allow(self) -> Callable[[str, str], bool] | None:
        """What a redactor is handed (`Redactor(..., allow=)`): None when the list allows nothing."""
        return self.allows if self.entries else None

    def allows_text(self, text: str) -> bool:
        """The leak gate's question (its rules have other names): exactly this text was allowed."""
        if not self.entries:
            return False
        digest = self.digest(text)
        return any(split(fp)[1] == digest for fp in self.entries)   # type: ignore[index]

    def add(self, fingerprint: str, note: str = "") -> bool:
        """True when it was new. The caller has checked it (`refusal`)."""
        rule, _ = split(fingerprint) or ("", "")
        if fingerprint in self.entries:
            return False
        self.entries[fingerprint] = {"fingerprint": fingerprint, "rule": rule, "note": note,
                                     "added": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
        return True

    def remove(self, fingerprint: str) -> bool:
        return self.entries.pop(fingerprint, None) is not None

    def refusal(self, fingerprint: str, rules: Iterable[str], known: dict[str, str]) -> str | None:
        """Why `fingerprint` may not be allowed, or None. `rules`: every pattern rule's name; `known`:
        value -> secret id of every known value."""
        parts = split(fingerprint)
        if parts is None:
            return (f"{fingerprint[:100]!r} is not a fingerprint (RULE:{2 * DIGEST_BYTES} hex characters); "
                    "copy it from `muninn export … --json` (`redactions`) or the export summary")
        rule, digest = parts
        names = set(rules)
        if rule not in names:
            return (f"{rule!r} is not a pattern rule: only pattern hits can be allowed, never a known secret "
                    "value (a value you no longer consider secret is removed from the vault or secrets file)")
        if self.salt is None:
            return f"no export has printed a fingerprint with this allowlist yet ({self.path})"
        for value, secret_id in known.items():
            if any(self.digest(form) == digest for form in (value, *forms_of(value, ENCODINGS))):
                return (f"that fingerprint is the known secret value {secret_id!r}: known values are never "
                        "allowlisted (remove it from the vault or secrets file if it is not secret)")
        return None


def gate_allow(path: Path) -> Callable[[str], bool] | None:
    """What a leak gate is handed (`LeakGate(..., allow=)`): the file's texts, or None when it allows nothing."""
    allowlist = Allowlist.load(path)
    return allowlist.allows_text if allowlist.entries else None
