"""The full redactor every outside hit passes before any reader sees it: another tool's text was never
through muninn's export, so it gets all of it, the same passes as a fact file and a file read back:

    known values in every form (base64, hex, URL, case, split; the vault's, the secrets files', retired
    values the vault keeps), the pattern rules (with the owner's allowlist), the undeclared-secret
    detector, and retired values the vault no longer holds (their salted hashes, guards/known/retired.py).

The same class stands behind the MCP server (muninn.plugins.mcp.redaction.ValueRedactor.scrub_outside)
and `muninn search`, so an owner and an agent see the same text.
"""

from __future__ import annotations

from collections.abc import Mapping

from muninn.core.config import Settings
from muninn.core.errors import MuninnError
from muninn.guards.known import secret_values
from muninn.guards.known.retired import HashScanner, Ledger
from muninn.guards.redact.allowlist import Allowlist
from muninn.guards.redact.redactor import Redactor, marker
from muninn.guards.undeclared import detect as undeclared

RETIRED = "retired-value"


class FullScrub:
    def __init__(self, known: Mapping[str, str], allowlist: Allowlist | None, hashes: HashScanner | None) -> None:
        self._redactor = Redactor.for_facts(dict(known), allowlist)
        self._allowlist = allowlist
        self._hashes = hashes if hashes is not None and len(hashes) else None

    @classmethod
    def from_settings(cls, settings: Settings, known: Mapping[str, str] | None = None) -> FullScrub:
        if known is None:
            try:
                known = secret_values.known(settings)
            except MuninnError:     # a damaged vault: its values are readable by no one; the files' still count
                known = secret_values.known(settings, stores=False)
        allowlist = Allowlist.load(settings.paths.redact_allowlist)
        path = settings.paths.retired_hashes
        # Read, never written: Ledger only writes in remember(), which this never calls.
        hashes = Ledger(path).retired(known) if path.exists() else None
        return cls(known, allowlist, hashes)

    def __call__(self, text: str) -> str:
        if not text:
            return text
        text = self._redactor.redact(text).text
        text = _replace(text, [(f.start, f.end) for f in undeclared.find(text)
                               if self._allowlist is None
                               or not self._allowlist.allows(undeclared.RULE, text[f.start:f.end])],
                        marker(undeclared.RULE))
        if self._hashes is not None:
            text = _replace(text, [(h.start, h.end) for h in self._hashes.scan(text)], marker(RETIRED))
        return text


def _replace(text: str, spans: list[tuple[int, int]], mark: str) -> str:
    if not spans:
        return text
    out, pos = [], 0
    for start, end in sorted(spans):
        if start < pos:
            start = pos
        if end <= start:
            continue
        out += [text[pos:start], mark]
        pos = end
    return "".join(out) + text[pos:]
