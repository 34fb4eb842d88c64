"""Billed embedding tokens: the one owner of `<home>/embed/billed.sqlite` and of the hard cap
`embed.max_billed_tokens`.

Every call the embedding door (plugins/embed/server.py) forwards to a provider is metered here in two steps:
before it, an upper bound of what it can bill is reserved in one IMMEDIATE transaction (so two processes
sharing the workspace cannot both slip under the cap); after it, the reservation is replaced by what the
provider's `usage` says it billed. A reservation whose call never came back (a kill, a timeout) stays counted
at its bound: the meter errs towards spending less, never more. The call that would take used + bound past
the cap is refused before anything is sent.

The bound needs no tokenizer download: each token of the subword tokenizers these providers use (byte-level
BPE, SentencePiece, WordPiece) covers at least one byte of the UTF-8 text, so the text's byte count, plus two
markers per input, is never below what it is billed. It is ~4x the real count for English prose; only the
last call before the cap pays for that slack, since every settled call counts its real usage.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from muninn.core.errors import ExitCode, MuninnError

MARKERS_PER_INPUT = 2     # [CLS]/[SEP], <s>/</s>: tokens a provider may add that cover no byte
BUSY_SECONDS = 10.0


class CapReached(MuninnError):
    """The call would cross embed.max_billed_tokens: refused before it was sent."""

    exit_code = ExitCode.BILLED_CAP


def bound(texts: Sequence[str]) -> int:
    """An upper bound of the tokens these texts can be billed (see the module's note)."""
    return sum(len(t.encode("utf-8")) + MARKERS_PER_INPUT for t in texts)


@dataclass(frozen=True)
class Usage:
    used: int          # billed, plus the bound of every call not settled
    cap: int | None
    calls: int
    refused: int

    def describe(self) -> str:
        cap = f"of {self.cap:,} (embed.max_billed_tokens)" if self.cap is not None else "(no cap set)"
        said = f"{self.used:,} billed tokens {cap} in {self.calls} call(s)"
        return said + (f"; {self.refused} refused at the cap" if self.refused else "")


def refusal(used: int, asked: int, cap: int) -> str:
    return (f"embedding refused: the next call or batch could bill up to {asked:,} tokens and {used:,} of "
            f"embed.max_billed_tokens {cap:,} are used; raise embed.max_billed_tokens in muninn.yaml to go on "
            "(what was embedded is kept, and a rerun resumes)")


class Meter:
    """The billed-token ledger of one workspace."""

    def __init__(self, path: Path, cap: int | None) -> None:
        self.path, self.cap = path, cap

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=BUSY_SECONDS, isolation_level=None)
        conn.execute("CREATE TABLE IF NOT EXISTS calls (id INTEGER PRIMARY KEY, at REAL NOT NULL, "
                     "provider TEXT NOT NULL, bound INTEGER NOT NULL, billed INTEGER, "
                     "state TEXT NOT NULL CHECK (state IN ('open', 'billed', 'refused')))")
        return conn

    @staticmethod
    def _used(conn: sqlite3.Connection) -> int:
        row = conn.execute("SELECT COALESCE(SUM(CASE state WHEN 'billed' THEN billed WHEN 'open' THEN bound "
                           "ELSE 0 END), 0) FROM calls").fetchone()
        return int(row[0])

    def reserve(self, provider: str, tokens: int) -> int:
        """Reserve `tokens` for one call; returns its id. Raises CapReached (and records the refusal)."""
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            used = self._used(conn)
            if self.cap is not None and used + tokens > self.cap:
                conn.execute("INSERT INTO calls (at, provider, bound, state) VALUES (?, ?, ?, 'refused')",
                             (time.time(), provider, tokens))
                conn.execute("COMMIT")
                raise CapReached(refusal(used, tokens, self.cap))
            cur = conn.execute("INSERT INTO calls (at, provider, bound, state) VALUES (?, ?, ?, 'open')",
                               (time.time(), provider, tokens))
            conn.execute("COMMIT")
            return int(cur.lastrowid or 0)
        finally:
            conn.close()

    def settle(self, call: int, billed: int | None) -> None:
        """What the provider said it billed (None: it did not say, so the bound stays counted)."""
        conn = self._connect()
        try:
            conn.execute("UPDATE calls SET billed = COALESCE(?, bound), state = 'billed' WHERE id = ?",
                         (billed, call))
        finally:
            conn.close()

    def release(self, call: int) -> None:
        """The provider answered with a refusal of its own (a 4xx): nothing was billed."""
        self.settle(call, 0)

    def usage(self) -> Usage:
        if not self.path.exists():
            return Usage(0, self.cap, 0, 0)
        conn = self._connect()
        try:
            used = self._used(conn)
            calls, refused = conn.execute("SELECT COALESCE(SUM(state != 'refused'), 0), "
                                          "COALESCE(SUM(state = 'refused'), 0) FROM calls").fetchone()
            return Usage(used, self.cap, int(calls), int(refused))
        finally:
            conn.close()

    def refused_since(self, since: float) -> int:
        """Calls refused at the cap since `since` (a sync that found files missing asks why)."""
        if not self.path.exists():
            return 0
        conn = self._connect()
        try:
            return int(conn.execute("SELECT COUNT(*) FROM calls WHERE state = 'refused' AND at >= ?",
                                    (since,)).fetchone()[0])
        finally:
            conn.close()


def for_settings(settings) -> Meter:     # Settings: not imported, config imports nothing of this
    return Meter(settings.paths.billed_tokens, settings.embed.max_billed_tokens)


def _refused(meter: Meter, n: int, when: str) -> CapReached:
    return CapReached(f"the embedding door refused {n} call(s) at embed.max_billed_tokens{when} "
                      f"({meter.usage().describe()})",
                      fix="raise embed.max_billed_tokens in muninn.yaml and rerun: what was embedded is kept")


def refused_since(settings, since: float) -> CapReached | None:
    """The refusal sentence when the door refused calls at the cap since `since` (None when no cap is set)."""
    if settings.embed.max_billed_tokens is None:
        return None
    meter = for_settings(settings)
    n = meter.refused_since(since)
    return _refused(meter, n, "") if n else None


def would_cross(settings, texts: Sequence[str]) -> CapReached | None:
    """Before muninn hands OpenViking texts it will embed through the door (a sync batch): refused when their
    bound does not fit under the cap, so the batch is not written at all. OpenViking retries a refused
    embedding in the background after its write returned, so a refusal there could not be undone batch by
    batch; this check keeps it from happening."""
    cap = settings.embed.max_billed_tokens
    if cap is None or not settings.embed.forwards:
        return None
    used, asked = for_settings(settings).usage().used, bound(texts)
    return CapReached(refusal(used, asked, cap)) if used + asked > cap else None


# The ledgers of the workspaces this process's command loaded, and since when (muninn.core.cliutil.settings).
_WATCHED: dict[Path, tuple[Meter, float]] = {}


def watch(settings) -> None:
    meter = for_settings(settings)
    _WATCHED.setdefault(meter.path, (meter, time.time()))


def refused_during_command() -> CapReached | None:
    """When the door refused calls at the cap while this command ran, the sentence that says so. OpenViking
    embeds on its own behalf, so a refusal reaches a command as OpenViking's error (a file missing after
    wait, "no context record"): the CLI's edge says the cause instead (exit 27)."""
    for meter, since in _WATCHED.values():
        if n := meter.refused_since(since):
            return _refused(meter, n, " while this command ran")
    return None
