"""Value redaction for everything the MCP server sends out or logs.

The known values come from the one collector (`secret_values.known`): the vault's encrypted store
(values `muninn secret add` put there included), the secrets YAML of `vault.files`, `guard.secret_files`,
`export.secret_files` and secrets sources. The
replacement is the shared redactor in muninn.guards.redact (one Aho-Corasick pass over the
values, then patterns), the one the exporter and the leak gate's reports use. If a store exists
and its key cannot open it, the server does not start. A store that is damaged (truncated,
corrupt: `VaultDamaged`) is the one exception: its values cannot be read by anyone, muninn's own
vault tools included (they answer with the damage sentence), so the server starts with the YAML
values alone, and the other tools keep working.
"""

from __future__ import annotations

from muninn.core.config import Settings
from muninn.guards import secret_values
from muninn.guards.forms import ENCODINGS
from muninn.guards.redact import Redactor
from muninn.plugins.access.store import VaultDamaged


class ValueRedactor:
    """`scrub(text)`: every known secret value, in one Aho-Corasick pass (outputs and the audit log).
    `scrub_all(text)`: values, then patterns (what an agent writes into memory).

    Outputs get the value pass only: the pattern pass costs ~5 ms per 1.7 KB (measured in
    evals/results/guard.md) and would blow the 2 ms budget per call, while everything an output can
    contain was pattern-redacted on the way in: by the exporter, or by recall_remember below.
    """

    def __init__(self, known: dict[str, str]) -> None:
        self.count = len(known)
        self._known = known
        self._redactor = Redactor(known)
        self._writer: Redactor | None = None

    def _writes(self) -> Redactor:
        """What an agent writes becomes a fact file: every form of the table and the normalised view,
        as export uses (base64, %XX, a value split by U+200B or markup, a homoglyph). Built on first use."""
        if self._writer is None:
            self._writer = Redactor(self._known, encodings=ENCODINGS, views=True, scanner=self._redactor.scanner)
        return self._writer

    @classmethod
    def from_settings(cls, settings: Settings) -> ValueRedactor:
        try:
            return cls(secret_values.known(settings))
        except VaultDamaged:
            return cls(secret_values.known(settings, stores=False))

    def scrub(self, text: str) -> str:
        return self._redactor.redact_values(text).text

    def scrub_all(self, text: str) -> str:
        return self._writes().redact(text).text
