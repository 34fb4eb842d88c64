"""Salted hashes of every secret value muninn has known, so a value rotated out of the vault that
already reached the server is still found.

The ledger (next to the vault store, `retired-hashes.json`, 0600) holds one random salt and, per
value, a keyed BLAKE2b digest, its length, whether it holds whitespace, and its secret id; never
the value. `secret load` feeds it the values it is about to replace, and each server leak scan the
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
from muninn.guards.known.forms import ENCODINGS, fold_needle, folded, folded_text, forms_of


def _digest(salt: bytes, value: str) -> str:
    return hashlib.blake2b(value.encode(), key=salt, digest_size=16).hexdigest()


@dataclass(frozen=True)
class HashHit:
    secret_id: str
    line: int
    start: int
    end: int


def _head(salt: bytes, folded: str) -> int:
    """One byte of a keyed hash of a folded value's first characters: a filter that says where a
    folded value may start, and that tells nothing of the value (256 outcomes)."""
    return hashlib.blake2b(folded[:HEAD].encode(), key=salt, digest_size=1).digest()[0]


HEAD = 5


class Ledger:
    def __init__(self, path: Path) -> None:
        self.path = path
        data = json.loads(path.read_text()) if path.exists() else {}
        self.salt = bytes.fromhex(data["salt"]) if "salt" in data else os.urandom(32)
        self.entries: dict[str, dict] = dict(data.get("entries", {}))

    def remember(self, values: Iterable[tuple[str, str]]) -> int:
        """Record (secret id, value) pairs; returns how many were new. Saves when anything was.
        Each value's forms (`guards/known/forms.py`: base64, hex, URL, JSON, shell, base85) are hashed too,
        and its folded view (any case, split or separator spelling), each pointing at the value's own
        digest (`of`), so a rotated value's encoded and case-changed copies are still found."""
        added = 0
        changed = False
        for secret_id, value in values:
            if not value:
                continue
            h = _digest(self.salt, value)
            entry = self.entries.get(h)
            if entry is None:
                self.entries[h] = entry = {"id": secret_id, "length": len(value),
                                           "space": any(c.isspace() for c in value)}
                added += 1
            if not entry.get("forms"):
                entry["forms"] = changed = True      # a ledger written before forms were hashed gets them once
                self._remember_forms(secret_id, value, h)
        if added or changed or not self.path.exists():
            atomic.write_text(self.path, json.dumps({"salt": self.salt.hex(), "entries": self.entries}), mode=0o600)
        return added

    def _remember_forms(self, secret_id: str, value: str, of: str) -> None:
        for form in forms_of(value, ENCODINGS):
            if form != value:
                self.entries.setdefault(_digest(self.salt, form), {
                    "id": secret_id, "length": len(form), "space": any(c.isspace() for c in form), "of": of})
        folded = fold_needle(value)
        if folded is not None and len(folded) >= HEAD:
            self.entries.setdefault(_digest(self.salt, "\0f" + folded), {
                "id": secret_id, "length": len(folded), "view": "folded", "head": _head(self.salt, folded), "of": of})

    def retired(self, live: Iterable[str]) -> HashScanner:
        """A scanner for the remembered values (and their forms) that are no longer among `live`."""
        alive = {_digest(self.salt, v) for v in live}
        return HashScanner(self.salt, {h: e for h, e in self.entries.items()
                                       if h not in alive and e.get("of") not in alive})


def merged(now: bytes, incoming: bytes) -> bytes | None:
    """Two ledger files as one that forgets nothing either remembers (a restore must never bring back a
    value retired since the backup). None when their salts differ: their hashes cannot be joined."""
    try:
        a, b = json.loads(now), json.loads(incoming)
        if a.get("salt") != b.get("salt"):
            return None
        entries = {**dict(b.get("entries", {})), **dict(a.get("entries", {}))}
    except (ValueError, AttributeError, TypeError):
        return None
    if len(entries) == len(a.get("entries", {})):
        return now                          # nothing new: this host's file as it is
    return json.dumps({"salt": a["salt"], "entries": entries}).encode()


class HashScanner:
    def __init__(self, salt: bytes, entries: dict[str, dict]) -> None:
        self.salt = salt
        self.entries = entries
        plain = [e for e in entries.values() if "view" not in e]
        self.solid = sorted({e["length"] for e in plain if not e["space"]})
        self.spaced = sorted({e["length"] for e in plain if e["space"]})
        folded = [e for e in entries.values() if e.get("view") == "folded"]
        self.folded = sorted({e["length"] for e in folded})
        self.heads = {e["head"] for e in folded}
        # Only runs at least as long as the shortest value can hold one: prose words are skipped whole.
        self._runs = re.compile(rf"\S{{{self.solid[0]},}}") if self.solid else None

    def __len__(self) -> int:
        """How many retired values (not counting their forms)."""
        return sum(1 for e in self.entries.values() if "of" not in e)

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
        if self.folded:
            for start, end, secret_id in self._folded_hits(text):
                hits.setdefault((start, end), HashHit(secret_id, text.count("\n", 0, start) + 1, start, end))
        return sorted(hits.values(), key=lambda h: h.start)

    def _folded_hits(self, text: str) -> list[tuple[int, int, str]]:
        """Windows of the folded view whose head passes the one-byte filter, hashed at every length."""
        view = folded_text(text)
        if len(view) < self.folded[0]:
            return []
        found: list[tuple[int, int, str]] = []
        head_key = hashlib.blake2b(key=self.salt, digest_size=1)
        keyed = hashlib.blake2b(key=self.salt, digest_size=16)
        for i in range(len(view) - self.folded[0] + 1):
            h = head_key.copy()
            h.update(view[i:i + HEAD].encode())
            if h.digest()[0] not in self.heads:
                continue
            for n in self.folded:
                if i + n > len(view):
                    break
                full = keyed.copy()
                full.update(("\0f" + view[i:i + n]).encode())
                entry = self.entries.get(full.hexdigest())
                if entry is not None and entry.get("view") == "folded":
                    found.append((i, n, entry["id"]))
        if not found:
            return []
        where = folded(text)[1]
        return [(where[i], where[i + n - 1] + 1, secret_id) for i, n, secret_id in found]
