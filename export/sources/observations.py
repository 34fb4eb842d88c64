"""An agent's observation log (JSONL: ts, tool, input, output): one fact per past tool call.

The output is capped: the useful part of a tool call is what was asked and how it began to
answer, and a 50 KB build log would drown the fact's vector. Values are redacted before the
cap and before JSON encoding (`redact_with`, set by the export pipeline): a cut could otherwise
keep the first characters of a value, and an escape (`\\"`) could split one.

After the context marker each call carries its neighbours in the same session (without a session:
the adjacent lines of the log, at most an hour apart): the two calls before it, which say what the
agent was after ("why did curl get a 403?" is answered by the VPN check before it), and the one
after, which shows what came of the answer. One line each (tool, input, first line of output): more
would drown the call itself in BM25 and the reranker's budget, where context counts less anyway.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from pydantic import Field

from muninn.core import factfile
from muninn.core.errors import ConfigError
from muninn.export.dates import source_date
from muninn.export.facts import Fact, slug
from muninn.export.sources import Options


class ObservationOptions(Options):
    max_output: int = Field(1000, ge=0, description="Characters of each output kept")
    max_input: int = Field(1000, ge=0, description="Characters of each input kept")
    agent: str | None = Field(None, description="Whose log this is, for the lead line")


def _same(text: str) -> str:
    return text


def _text(value: object, redact: Callable[[str], str] = _same) -> str:
    """A payload field as text, redacted: leaf by leaf (a value JSON escaping would hide), then the whole
    (a value spread over keys and values, or a number's digits beside their neighbours)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return redact(value)
    return redact(json.dumps(_redact_leaves(value, redact), sort_keys=True, ensure_ascii=False))


def _redact_leaves(value: object, redact: Callable[[str], str]) -> object:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(str(k)): _redact_leaves(v, redact) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact_leaves(v, redact) for v in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        # A declared value returned as a JSON number: its digits are redacted as text would be.
        shown = json.dumps(value)
        hidden = redact(shown)
        return value if hidden == shown else hidden
    return value


_MARKER = re.compile(r"\[REDACTED:[^\]\n]*\]")


def _cut(text: str, limit: int) -> str:
    """`text[:limit]`, moved back so it never ends inside a `[REDACTED:…]` marker."""
    for m in _MARKER.finditer(text, max(0, limit - 200), limit + 200):
        if m.start() < limit < m.end():
            return text[:m.start()]
    return text[:limit]


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else _cut(text, limit) + f"\n… [{len(text) - limit} more characters cut]"


# The log's writer (nightly/observe.py) redacts and caps with the same two, so a line and its fact agree.
redacted_text, cap = _text, _cap


class ObservationsSource:
    kind = "observations"
    help = "Agent observation log (JSONL: ts, tool, input, output): one fact per tool call"
    Options = ObservationOptions
    absent_is_empty = True   # `muninn observe` creates the log at the first tool call

    def __init__(self, path: Path, options: ObservationOptions) -> None:
        self.path = path
        self.options = options
        self.redact: Callable[[str], str] = _same

    def redact_with(self, redact: Callable[[str], str]) -> None:
        """Redact input and output before they are JSON-encoded and cut (the pipeline calls it)."""
        self.redact = redact

    def secret_files(self) -> list[Path]:
        return []

    def facts(self) -> Iterator[Fact]:
        rows = list(self._rows())
        for row, neighbours in zip(rows, _neighbours(rows, self.redact), strict=True):
            yield self._fact(row, neighbours)

    def _rows(self) -> Iterator[dict]:
        if not self.path.exists():
            return
        with self.path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ConfigError(f"not valid JSON: {exc.msg}", path=str(self.path), line=lineno) from None
                if not isinstance(row, dict) or not row.get("ts") or not row.get("tool"):
                    raise ConfigError("each line needs an object with at least `ts` and `tool`",
                                      path=str(self.path), line=lineno)
                yield row

    def _fact(self, row: dict, context: str = "") -> Fact:
        ts, tool = str(row["ts"]), str(row["tool"])
        # Stable across runs and across lines moving: what happened, not where it sits in the file.
        # (A hash of the unredacted input, so redacting one more value does not rename the fact.)
        digest = hashlib.sha256(f"{ts}\x00{tool}\x00{_text(row.get('input'))}".encode()).hexdigest()[:12]
        raw_in, raw_out = _text(row.get("input"), self.redact), _text(row.get("output"), self.redact)
        date = _moment(ts)
        who = self.options.agent or "the agent"
        first = _cut(raw_in.strip().splitlines()[0], 80) if raw_in.strip() else tool
        lead = f"A past tool call by {who}: {tool} at {ts}."
        body = (f"# {tool}: {first}\n\nInput:\n\n```\n{_cap(raw_in, self.options.max_input)}\n```\n\n"
                f"Output:\n\n```\n{_cap(raw_out, self.options.max_output)}\n```")
        session = row.get("session")
        return Fact(
            source=self.kind, kind="observation", key=digest, title=f"{tool}: {first}", body=body,
            # A date and the digest, no word of the tool or its input: the path is shown outside the
            # untrusted-data label (hits[].uri, briefing lines, recall_list).
            lead=lead, path=f"{slug(date[:10] if date else 'undated')}/{digest}",
            project=str(row["project"]) if row.get("project") else None, date=date,
            tags=(tool,) + ((str(session),) if session else ()), breadcrumb=(tool, first),
            source_path=self.path.name, context=context,
        )


def _moment(ts: str) -> str | None:
    """The call's time in UTC with the time of day (`2025-10-02T09:14:03Z`), so `--since 30m` and the
    freshness `muninn watch` reports work at that precision; a bare date stays a date."""
    return source_date(ts).value


BEFORE, AFTER = 2, 1
_GAP = dt.timedelta(hours=1)


def _when(row: dict) -> dt.datetime | None:
    return factfile.parse_date(row.get("ts"))


def _near(a: dict, b: dict) -> bool:
    ta, tb = _when(a), _when(b)
    return ta is not None and tb is not None and abs(ta - tb) <= _GAP


def _line(row: dict, redact: Callable[[str], str]) -> str:
    """One neighbour: tool, input, first line of output, redacted first, then cut at a space (never
    inside a word: a value the redaction missed is then whole for the leak gate, or not there)."""
    def first(value: object, limit: int) -> str:
        line = next((" ".join(ln.split()) for ln in _text(value, redact).splitlines() if ln.strip()), "")
        return line if len(line) <= limit else line[:limit].rsplit(" ", 1)[0] if " " in line[:limit] else ""
    out = f"{row['tool']}: {first(row.get('input'), 120)}".rstrip(": ")
    if answer := first(row.get("output"), 80):
        out += f" -> {answer}"
    return out


def _neighbours(rows: list[dict], redact: Callable[[str], str]) -> list[str]:
    """Per row: the calls around it in its session (another session's calls interleaved in the log
    are skipped), BEFORE of them, the call itself, AFTER of them. Rows without a session are one
    group whose neighbours must be within _GAP of the call."""
    groups: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        groups.setdefault(str(row.get("session") or ""), []).append(i)
    out = [""] * len(rows)
    for session, members in groups.items():
        for pos, i in enumerate(members):
            before = [rows[j] for j in members[max(0, pos - BEFORE):pos]]
            after = [rows[j] for j in members[pos + 1:pos + 1 + AFTER]]
            if not session:
                before = [r for r in before if _near(r, rows[i])]
                after = [r for r in after if _near(r, rows[i])]
            if before or after:
                out[i] = "\n".join([*(_line(r, redact) for r in before), f"{rows[i]['tool']}: (this call)",
                                    *(_line(r, redact) for r in after)])
    return out
