"""Salted hashes of every secret value muninn has known, so a value rotated out of the vault that
already reached the server is still found.

The ledger (next to the vault store, `retired-hashes.json`, 0600) holds one random salt and, per
value, a keyed BLAKE2b digest, its length, whether it holds whitespace, and its secret id; never
the value. `vault sync` feeds it the values it is about to replace, and each server leak scan the
live values, so a value that was live at either moment is remembered after it is gone.

Finding a hashed value needs candidate strings. A value without whitespace can only occur inside
a run of non-space characters at least as long as itself, so every window of the value's length
inside such runs is hashed: that finds it embedded anywhere (in a URL, after `=`, in a table cell)
while skipping ordinary prose, whose words are shorter than a secret. Token splitting on
punctuation would miss a value that holds punctuation or is glued to its neighbours. A value with
whitespace (a passphrase) is looked for in every window of each line. One salt for the ledger
keeps the cost at one hash per window and length instead of one per window and value; it still
defeats precomputed tables.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from muninn.core import atomic


def _digest(salt: bytes, value: str) -> str:
    return hashlib.blake2b(value.encode(), key=salt, digest_size=16).hexdigest()


@dataclass(frozen=True)
class HashHit:
    secret_id: str
    line: int
    start: int
    end: int


class Ledger:
    def __init__(self, path: Path) -> None:
        self.path = path
        data = json.loads(path.read_text()) if path.exists() else {}
        self.salt = bytes.fromhex(data["salt"]) if "salt" in data else os.urandom(32)
        self.entries: dict[str, dict] = dict(data.get("entries", {}))

    def remember(self, values: Iterable[tuple[str, str]]) -> int:
        """Record (secret id, value) pairs; returns how many were new. Saves when anything was."""
        added = 0
        for secret_id, value in values:
            if not value:
                continue
            h = _digest(self.salt, value)
            if h not in self.entries:
                self.entries[h] = {"id": secret_id, "length": len(value), "space": any(c.isspace() for c in value)}
                added += 1
        if added or not self.path.exists():
            atomic.write_text(self.path, json.dumps({"salt": self.salt.hex(), "entries": self.entries}), mode=0o600)
        return added

    def retired(self, live: Iterable[str]) -> HashScanner:
        """A scanner for the remembered values that are no longer among `live`."""
        gone = set(self.entries) - {_digest(self.salt, v) for v in live}
        return HashScanner(self.salt, {h: self.entries[h] for h in gone})


class HashScanner:
    def __init__(self, salt: bytes, entries: dict[str, dict]) -> None:
        self.salt = salt
        self.entries = entries
        self.solid = sorted({e["length"] for e in entries.values() if not e["space"]})
        self.spaced = sorted({e["length"] for e in entries.values() if e["space"]})
        # Only runs at least as long as the shortest value can hold one: prose words are skipped whole.
        self._runs = re.compile(rf"\S{{{self.solid[0]},}}") if self.solid else None

    def __len__(self) -> int:
        return len(self.entries)

    def scan(self, text: str) -> list[HashHit]:
        if not self.entries:
            return []
        hits: dict[tuple[int, int], HashHit] = {}
        spans = [(m.start(), m.end(), self.solid) for m in self._runs.finditer(text)] if self._runs else []
        if self.spaced:
            start = 0
            for line in text.split("\n"):
                spans.append((start, start + len(line), self.spaced))
                start += len(line) + 1
        keyed = hashlib.blake2b(key=self.salt, digest_size=16)   # copied per window: no key set-up each time
        for start, end, lengths in spans:
            for n in lengths:
                for i in range(start, end - n + 1):
                    h = keyed.copy()
                    h.update(text[i:i + n].encode())
                    entry = self.entries.get(h.hexdigest())
                    if entry is not None:
                        hits[(i, i + n)] = HashHit(entry["id"], text.count("\n", 0, i) + 1, i, i + n)
        return sorted(hits.values(), key=lambda h: h.start)
