"""Value redaction for everything the MCP server sends out or logs.

The known values come from the one collector (`secret_values.known`): the vault's encrypted store
(values `muninn secret add` put there included), the secrets YAML of `vault.files`, `guard.secret_files`,
`export.secret_files` and secrets sources. The
replacement is the shared redactor in muninn.guards.redact.redactor (one Aho-Corasick pass over the
values, then patterns), the one the exporter and the leak gate's reports use. If a store exists
and its key cannot open it, the server does not start. A store that is damaged (truncated,
corrupt: `VaultDamaged`) is the one exception: its values cannot be read by anyone, muninn's own
vault tools included (they answer with the damage sentence), so the server starts with the YAML
values alone, and the other tools keep working.

The pattern pass (`scrub_all`) honours the owner's allowlist (`muninn redact allow`) exactly as export
does, through the same `Redactor.for_facts`: a text the owner allowed in an exported note is not
redacted when an agent writes it back. Known values never are allowed; the file is read at start, and
a damaged one stops the server with the sentence `muninn redact list` gives.
"""

from __future__ import annotations

from muninn.core.config import Settings
from muninn.guards.known import secret_values
from muninn.guards.redact.allowlist import Allowlist
from muninn.guards.redact.patterns import PatternScanner
from muninn.guards.redact.redactor import ENCODINGS, Redactor, marker
from muninn.plugins.access.store import VaultDamaged


class ValueRedactor:
    """`scrub(text)`: every known secret value, in one Aho-Corasick pass (outputs and the audit log).
    `scrub_all(text)`: values, then patterns (what an agent writes into memory).

    Outputs get the value pass only: the pattern pass costs ~5 ms per 1.7 KB (measured in
    evals/results/guard.md) and would blow the 2 ms budget per call, while everything an output can
    contain was pattern-redacted on the way in: by the exporter, or by recall_remember below.
    """

    def __init__(self, known: dict[str, str], allowlist: Allowlist | None = None) -> None:
        self.count = len(known)
        self._known = known
        self._allowlist = allowlist
        # Every form of the table and the views, as export: a value added or rotated after its copies
        # reached the server is hidden in its base64, hex, case-changed and split copies too.
        self._redactor = Redactor(known, encodings=ENCODINGS, views=True)
        self._writer: Redactor | None = None
        self._scanner: PatternScanner | None = None

    def _writes(self) -> Redactor:
        """What an agent writes becomes a fact file: export's redactor (every form of the table, the
        normalised view, the owner's allowlist). Built on first use."""
        if self._writer is None:
            self._writer = Redactor.for_facts(self._known, self._allowlist, scanner=self._redactor.scanner)
        return self._writer

    @classmethod
    def from_settings(cls, settings: Settings) -> ValueRedactor:
        # Loaded, never keyed: a server that prints no fingerprint must not create the file.
        allowlist = Allowlist.load(settings.paths.redact_allowlist)
        try:
            return cls(secret_values.known(settings), allowlist)
        except VaultDamaged:
            return cls(secret_values.known(settings, stores=False), allowlist)

    def scrub(self, text: str) -> str:
        return self._redactor.redact_values(text).text

    def _rules(self) -> PatternScanner:
        """muninn's own rules, the ones export runs (the undeclared-secret detector among them), without
        detect-secrets' entropy plugins (base64 of a sentence is no secret). Built on first use."""
        if self._scanner is None:
            self._scanner = PatternScanner(use_ds=False)
        return self._scanner

    def scrub_file(self, text: str) -> str:
        """A whole file read back from the server: values, then the rules export redacts undeclared secrets
        with (a `Kennwort` told in a sentence, a `.pgpass` line, a PIN), which also cover files no export
        or `recall_remember` wrote (those were redacted on the way in). Run on the whole file before any
        cut, so a cut never decides differently from its file."""
        text = self.scrub(text)
        allow = self._allowlist
        found = [s for s in self._rules().scan(text)
                 if allow is None or not allow.allows(s.rule, text[s.start:s.end])]
        if not found:
            return text
        out, pos = [], 0
        for f in found:
            out += [text[pos:f.start], marker(f.rule)]
            pos = f.end
        return "".join(out) + text[pos:]

    def scrub_name(self, uri: str) -> str:
        """A URI as a listing shows it: values, then the same rules over its path read as export reads a
        file name (`/`, `-` and `_` as spaces), every hit replaced by `redacted`."""
        uri = self.scrub(uri)
        scheme, sep, path = uri.rpartition("://")
        head = scheme + sep
        spaced = path.replace("/", " ")
        views = dict.fromkeys((path, spaced, spaced.replace("-", " ").replace("_", " ")))
        spans = sorted({(s.start, s.end) for view in views for s in self._rules().scan(view)})
        merged: list[list[int]] = []
        for start, end in spans:            # one character for one in every view: spans line up
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        for start, end in reversed(merged):
            path = path[:start] + "redacted" + path[end:]
        return head + path

    def scrub_all(self, text: str) -> str:
        return self._writes().redact(text).text
