"""The leak gate: an independent second opinion over rendered files, before anything is synced.

It shares no code with the redactor (`guards/redact.py`, `guards/patterns.py`, `guards/rules/`):
its own Aho-Corasick automaton (over str, where the redactor's is over bytes) and its own short
table of high-precision patterns. In the seed project it was exactly such a separate scanner that
caught what the redactor missed. A file it flags is dropped, not repaired: the fix belongs in the
redaction, and the run fails closed.

Reports carry secret ids, rule names, paths and line numbers. Never a value.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import ahocorasick_rs

KNOWN_VALUE = "known-value"
# Values the gate accepts next to a label: redaction markers and documentation placeholders.
_HARMLESS = re.compile(r"^(?:\[REDACTED:[^\]]*\]|\$\{?\w+\}?|<[^>]*>|\{\{.*\}\}|[*xX.]{3,})")
_ASSIGNED = r"[\"'`*_\]]*\s*(?:[:=|]|:=|=>|\sis\s)\s*[*_]*\s*[\"'`]?"

# name -> (pattern, group holding the secret or 0, needs letters and digits)
_PATTERNS: dict[str, tuple[re.Pattern[str], int, bool]] = {
    "private-key-block": (re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY"), 0, False),
    "aws-access-key-id": (re.compile(r"\b(?:AKIA|ASIA|AROA|AIDA)[A-Z0-9]{16}\b"), 0, False),
    "github-token": (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"), 0, False),
    "slack-token": (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), 0, False),
    "stripe-secret-key": (re.compile(r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"), 0, False),
    "google-api-key": (re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), 0, False),
    "jwt": (re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"), 0, False),
    "url-password": (re.compile(r"\b[a-zA-Z][\w+.-]*://[^\s:/@'\"]+:([^\s@/'\"]+)@"), 1, False),
    "authorization-header": (
        re.compile(r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|digest)\s+)?([^\s\"'`]{8,})"),
        1, True,
    ),
    "bearer-token": (re.compile(r"(?i)\b(?:bearer|basic)\s+([A-Za-z0-9._~+/=-]{12,})"), 1, True),
    "assigned-secret": (
        re.compile(r"(?i)(?<![a-z])(?:password|passwd|pwd|passphrase|secret(?:[ _-]?key)?|token"
                   r"|(?:api|access|private|signing|master)[ _-]?key|client[ _-]?secret)s?"
                   + _ASSIGNED + r"([^\s\"'`|,;]{8,})"),
        1, True,
    ),
}


@dataclass(frozen=True)
class Finding:
    reason: str               # "known-value" or the pattern's name
    secret_id: str | None     # the known secret's id; None for a pattern
    line: int                 # 1-based


@dataclass
class Dropped:
    path: str
    findings: list[Finding]

    @property
    def reason(self) -> str:
        parts = sorted({f"{f.reason}:{f.secret_id}" if f.secret_id else f.reason for f in self.findings})
        lines = sorted({f.line for f in self.findings})
        return f"{', '.join(parts)} (line {', '.join(map(str, lines[:5]))}{', …' if len(lines) > 5 else ''})"


@dataclass
class GateReport:
    scanned: int = 0
    dropped: list[Dropped] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.dropped

    def to_json(self) -> dict[str, Any]:
        return {"scanned": self.scanned, "clean": self.clean,
                "dropped": [{"path": d.path, "reason": d.reason, "findings": [asdict(f) for f in d.findings]}
                            for d in self.dropped]}


def _has_letters_and_digits(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def scan(text: str) -> list[Finding]:
    """Pattern findings only (no known values), one per match."""
    out: list[Finding] = []
    lines = _Lines(text)
    for name, (pattern, group, mixed) in _PATTERNS.items():
        for m in pattern.finditer(text):
            value = m.group(group)
            if _HARMLESS.match(value) or (mixed and not _has_letters_and_digits(value)):
                continue
            out.append(Finding(name, None, lines.at(m.start(group))))
    return sorted(out, key=lambda f: (f.line, f.reason))


class _Lines:
    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: list[int] | None = None

    def at(self, pos: int) -> int:
        if self._starts is None:
            self._starts = [m.start() for m in re.finditer("\n", self.text)]
        return bisect_right(self._starts, pos - 1) + 1


class LeakGate:
    """Flags known values (`known`: value -> secret id) and pattern hits in files or trees."""

    def __init__(self, known: Mapping[str, str], *, patterns: bool = True) -> None:
        self._values = [v for v in known if v]
        self._ids = [known[v] for v in self._values]
        self._ac = ahocorasick_rs.AhoCorasick(self._values) if self._values else None
        self.patterns = patterns

    def scan(self, text: str) -> list[Finding]:
        out: list[Finding] = []
        if self._ac is not None:
            lines = _Lines(text)
            # Overlapping: a value hidden inside another value's occurrence is still reported.
            for idx, start, _ in self._ac.find_matches_as_indexes(text, overlapping=True):
                out.append(Finding(KNOWN_VALUE, self._ids[idx], lines.at(start)))
        if self.patterns:
            out.extend(scan(text))
        return sorted(set(out), key=lambda f: (f.line, f.reason, f.secret_id or ""))

    def check_file(self, path: Path) -> list[Finding]:
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            # Fail closed: what cannot be read cannot be shown to be clean.
            return [Finding(f"unreadable: {exc.strerror or type(exc).__name__}", None, 0)]
        # errors="replace" keeps the ASCII around a stray byte scannable instead of skipping the file.
        return self.scan(data.decode("utf-8", errors="replace"))

    def check_tree(self, root: Path, files: Iterable[Path] | None = None) -> GateReport:
        """Every file under `root` (or just `files`), with paths in the report relative to `root`."""
        root = Path(root)
        report = GateReport()
        paths = sorted(p for p in root.rglob("*") if p.is_file()) if files is None else list(files)
        for path in paths:
            report.scanned += 1
            findings = self.check_file(path)
            if findings:
                rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
                report.dropped.append(Dropped(rel, findings))
        return report
