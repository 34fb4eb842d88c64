"""Undeclared secrets (guards/undeclared/detect.py) as a redaction rule: export and what an agent writes
redact them like any pattern hit, with a fingerprint the owner can allow or declare.

Not used by `leak purge` (nightly/purge.py): on the server a finding is reported, never rewritten.
"""

from __future__ import annotations

from collections.abc import Iterator

from muninn.guards.rules import Rule
from muninn.guards.undeclared.detect import RULE, find


class UndeclaredSecret(Rule):
    name = RULE
    patterns = ()

    def spans(self, text: str, lowered: str | None = None, *, checked: bool = False) -> Iterator[tuple[int, int]]:
        for f in find(text):
            yield f.start, f.end
