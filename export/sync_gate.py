"""The leak gate again, at the door of OpenViking: `muninn sync` reads every file it is about to
upload and refuses the sync (exit 3, nothing uploaded) if any file

- was not written by `muninn export` (not in an export ledger: `pipeline.ledger_hashes`),
- was edited after export (its sha256 differs from the ledger's, or the ledger has none), or
- holds a known value or a pattern hit in its text or its relative path (`LeakGate`), or
- is not a whole fact file (`factfile.problem`: empty, no front matter, missing keys, truncated).

Export already gated what it wrote; this catches what happened in between: a hand-added note, a
fact edited in place, a value declared after the export ran. Names are shown with any value in
them redacted, and reasons carry secret ids, never values.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from muninn.core import factfile
from muninn.core.config import Settings
from muninn.core.errors import ExitCode, MuninnError
from muninn.guards.gate.leak_gate import Dropped, Finding, LeakGate
from muninn.guards.known import secret_values
from muninn.guards.redact.allowlist import gate_allow
from muninn.guards.redact.redactor import Redactor

NOT_EXPORTED = "not-written-by-export"
EDITED = "edited-after-export"
UNVERIFIED = "ledger-has-no-hash"   # written by an older muninn: export again
NOT_A_FACT = "not-a-fact-file"      # empty, no front matter, missing keys, truncated (factfile.problem)


class SyncRefused(MuninnError):
    """A file about to be uploaded failed the gate; nothing was uploaded."""

    exit_code = ExitCode.LEAK_GATE_DROPPED


@dataclass(frozen=True)
class Passed:
    """One folder's files as the gate read and passed them: sync uploads these bytes, never a second
    read of the folder (a file changed since would go up ungated)."""

    root: Path
    files: dict[str, bytes]


@dataclass
class SyncGate:
    gate: LeakGate
    names: Redactor   # only for showing file names safely
    # (folder, file, sha256 of its bytes, the ledger's hash) this gate found clean: asked again about the
    # same bytes, it gives the same verdict without scanning them again.
    _clean: set[tuple[str, str, str, str]] = field(default_factory=set, repr=False)

    @classmethod
    def from_known(cls, known: dict[str, str], allow: Callable[[str], bool] | None = None) -> SyncGate:
        return cls(LeakGate(known, allow=allow), Redactor(known, patterns=False))

    @classmethod
    def from_settings(cls, settings: Settings) -> SyncGate:
        return cls.from_known(secret_values.known(settings), gate_allow(settings.paths.redact_allowlist))

    def refused(self, root: Path, local: dict[str, bytes]) -> list[Dropped]:
        """Every file of `local` (relative path -> bytes under `root`) that may not be uploaded."""
        from muninn.export.pipeline import ledger_hashes

        written = ledger_hashes(root)
        out: list[Dropped] = []
        for rel, data in sorted(local.items()):
            digest = hashlib.sha256(data).hexdigest()
            expected = written.get(rel)
            seen = (str(root), rel, digest, expected or "")
            if seen in self._clean:
                continue
            findings: list[Finding] = []
            text = data.decode("utf-8", errors="replace")
            if why := factfile.problem(text):
                findings.append(Finding(f"{NOT_A_FACT}:{why}", None, 0))
            if expected is None:
                findings.append(Finding(NOT_EXPORTED, None, 0))
            elif not expected:
                findings.append(Finding(UNVERIFIED, None, 0))
            elif expected != digest:
                findings.append(Finding(EDITED, None, 0))
            findings += self.gate.scan_path(rel) + self.gate.scan(text)
            if findings:
                out.append(Dropped(self.names.redact_path(rel), findings))
            else:
                self._clean.add(seen)
        return out

    def check(self, folders: Iterable[tuple[Path, dict[str, bytes]]]) -> list[Passed]:
        """Every folder passed, in order; or SyncRefused naming every refused file of every folder."""
        folders = list(folders)
        refused = [(root, d) for root, local in folders for d in self.refused(root, local)]
        if not refused:
            return [Passed(root, local) for root, local in folders]
        shown = "; ".join(f"{self.names.redact_path(str(root))}/{d.path}: {d.reason}" for root, d in refused[:20])
        more = f" (and {len(refused) - 20} more)" if len(refused) > 20 else ""
        raise SyncRefused(f"sync refused, nothing uploaded: {len(refused)} file(s) failed the gate: {shown}{more}",
                          fix="re-run `muninn export` for the source (files must be as export wrote them), "
                              "and remove files export did not write from the folder")
