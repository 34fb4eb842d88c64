"""The audit log: one JSON line per guarded call.

Each line holds the time, profile, tool, the arguments, the decision, the reason and the
duration. Every string in it, argument keys included, passes the caller's scrubber (known values
and patterns) before it is capped, so neither a secret nor the prefix of one a cap would cut
lands in the log; the whole line is capped too. Line separators other than `\n` that JSON leaves
raw (U+2028, U+2029, U+0085) are escaped, so any line reader sees one record per line. The file
is created 0600 and appended to line by line: a crash loses at most the call in flight, and
concurrent servers never interleave within a line.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from muninn.core import atomic, jsonl

MAX_VALUE_CHARS = 200
MAX_KEY_CHARS = 64
MAX_LINE_CHARS = 4096
SCRUB_MARGIN = 4096
# Characters str.splitlines() (and many log readers) break a line at, which json.dumps leaves raw.
_SEPARATORS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}
_SEPARATOR = re.compile("[\u2028\u2029\x85]")

Scrub = Callable[[str], str]


def _capped(text: str, scrub: Scrub, cap: int) -> str:
    # Scrub before the cap, never after: a value the cap cuts is one the scrubber no longer knows. The
    # scrubber sees the cap plus a margin that holds any secret starting inside the cap (a 4096-bit PEM
    # key is ~3.3 KB), which bounds the pattern pass's cost on a 20,000-character observation.
    size = len(text)
    text = scrub(text[: cap + SCRUB_MARGIN])
    return text if len(text) <= cap else text[:cap] + f"…[{max(size, len(text)) - cap} more chars]"


def redact_arguments(arguments: Any, scrub: Scrub, cap: int = MAX_VALUE_CHARS) -> Any:
    """Arguments with every string, keys included, scrubbed and capped; structure, numbers and booleans kept."""
    if isinstance(arguments, dict):
        return {_capped(str(k), scrub, MAX_KEY_CHARS): redact_arguments(v, scrub, cap) for k, v in arguments.items()}
    if isinstance(arguments, list | tuple):
        return [redact_arguments(v, scrub, cap) for v in arguments]
    if isinstance(arguments, str):
        return _capped(arguments, scrub, cap)
    if arguments is None or isinstance(arguments, bool | int | float):
        return arguments
    return f"<{type(arguments).__name__}>"


def encode(line: dict[str, Any]) -> bytes:
    """One record as one line: separators escaped, and arguments summarised if the line is too long."""
    text = json.dumps(line, ensure_ascii=False)
    if len(text) > MAX_LINE_CHARS:
        args = json.dumps(line["arguments"], ensure_ascii=False)
        line = {**line, "arguments": {"_truncated": args[: MAX_LINE_CHARS // 2] + f"…[{len(args)} chars]"}}
        text = json.dumps(line, ensure_ascii=False)
    # backslashreplace: a lone surrogate from a JSON-RPC "\\ud800" is written as its escape, not a crash.
    return (_SEPARATOR.sub(lambda m: _SEPARATORS[m.group(0)], text) + "\n").encode("utf-8", "backslashreplace")


class AuditLog:
    def __init__(self, path: Path, scrub: Scrub) -> None:
        self.path = path
        self.scrub = scrub
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def record(self, *, profile: str, tool: str, arguments: Any, decision: str, reason: str,
               duration_ms: float, who: str | None = None, uri: str | None = None) -> dict[str, Any]:
        """One line. `who` is set for the owner's own acts from the shell (`muninn forget`): the OS
        user; an agent's call is known by its profile."""
        line = {
            "ts": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "profile": profile,
            "tool": _capped(tool, self.scrub, MAX_KEY_CHARS),   # the caller names the tool: it is an argument too
            "arguments": redact_arguments(arguments, self.scrub),
            "decision": decision,
            "reason": _capped(reason, self.scrub, MAX_LINE_CHARS // 4),
            "duration_ms": round(duration_ms, 3),
        } | ({"who": who} if who else {}) | ({"uri": _capped(uri, self.scrub, MAX_LINE_CHARS // 4)} if uri else {})
        data = encode(line)
        with self._lock:
            os.write(self._fd, data)  # one write per line: O_APPEND keeps lines whole
        return line

    def close(self) -> None:
        os.close(self._fd)


def _rescrubbed(value: Any, scrub: Scrub) -> Any:
    if isinstance(value, dict):
        return {_rescrubbed(k, scrub): _rescrubbed(v, scrub) for k, v in value.items()}
    if isinstance(value, list):
        return [_rescrubbed(v, scrub) for v in value]
    return scrub(value) if isinstance(value, str) else value


def purge_uris(path: Path, uris: Iterable[str], scrub: Callable[[], Scrub]) -> int:
    """Every line that names one of `uris` (a file a purge or a redacting rename took away: its old name
    may hold a value) read again through `scrub`, made from the values known now, so the old URI leaves
    the audit log as it left the server and the readers' copies. Only those lines are read (the pattern
    pass costs ms a line); the file is rewritten in place only when one changed, with what was appended
    meanwhile kept. Returns the lines changed."""
    wanted = [u for u in dict.fromkeys(uris) if u]
    if not wanted or not path.exists():
        return 0
    data = path.read_bytes()
    lines = data.split(b"\n")
    made: Scrub | None = None
    changed = 0
    for i, raw in enumerate(lines):
        text = raw.decode("utf-8", "replace")
        if not any(u in text or json.dumps(u, ensure_ascii=False)[1:-1] in text for u in wanted):
            continue
        try:
            record = json.loads(text)
        except ValueError:
            continue
        made = made or scrub()
        again = encode(_rescrubbed(record, made)).rstrip(b"\n")
        if again != raw:
            lines[i] = again
            changed += 1
    if changed:
        # In place, not by rename: a running server appends through its own descriptor (O_APPEND), which
        # a rename would leave writing into the unlinked file. Lines it appended since the read are kept.
        with atomic.translated(path), open(path, "r+b") as fh:
            tail = fh.read()[len(data):]
            fh.seek(0)
            fh.write(b"\n".join(lines) + tail)
            fh.truncate()
            fh.flush()
            os.fsync(fh.fileno())
    return changed


def read_lines(path: Path) -> jsonl.Lines:
    """Every record, and the numbers of the lines that are not one (`muninn audit` reports them)."""
    return jsonl.read(path)


def read(path: Path) -> list[dict[str, Any]]:
    return read_lines(path).records
