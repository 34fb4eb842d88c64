"""`muninn audit`'s rows: the MCP audit log and the access log read through their own modules
(plugins/mcp/audit.py, plugins/access/access_log.py own each format) and put in one shape to filter.

Row: `{log, time, who, profile, tool, decision, target, reason, line}`. `profile` is the MCP
profile the act came through (an access-log `who` of `mcp:<profile>`), else empty: the owner at
a shell. `decision` is `allow`, `deny` or `error` for MCP calls; `ok`, `deny` (a refusal) or
`exit N` for the access log; `removed` for `muninn forget`.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from muninn.core import jsonl
from muninn.core.config import Settings
from muninn.core.errors import ConfigError
from muninn.plugins.access import access_log
from muninn.plugins.mcp import audit
from muninn.plugins.search.request import parse_since

Log = Literal["mcp", "access", "all"]
LOGS: tuple[str, ...] = ("mcp", "access")
_DAY_WORDS = {"today": 0, "yesterday": 1}
_WORDY = re.compile(r"[^\W\d_]{3,}")


@dataclass
class Filters:
    profile: str | None = None
    tool: str | None = None          # a name or a glob (`recall_*`)
    denied: bool = False
    since: dt.datetime | None = None

    def keep(self, row: dict[str, Any]) -> bool:
        if self.profile is not None and self.profile not in (row["profile"], row["who"]):
            return False
        if self.tool is not None and not fnmatch.fnmatchcase(row["tool"] or "", self.tool):
            return False
        if self.denied and row["decision"] != "deny":
            return False
        return self.since is None or row["_at"] >= self.since


@dataclass
class View:
    rows: list[dict[str, Any]] = field(default_factory=list)
    files: dict[str, Path] = field(default_factory=dict)
    bad: dict[str, list[int]] = field(default_factory=dict)    # log -> skipped line numbers


def since(value: str, now: dt.datetime | None = None) -> dt.datetime:
    """`2h`, `7d`, `30m`, `2w`, an ISO date or time, `today`, `yesterday`, or what dateparser reads
    (`3 days ago`, `last monday`). Bad input is exit 2 with the forms that work."""
    now = now or dt.datetime.now(dt.UTC)
    word = value.strip().lower()
    if word in _DAY_WORDS:
        day = now.date() - dt.timedelta(days=_DAY_WORDS[word])
        return dt.datetime.combine(day, dt.time(), dt.UTC)
    when = parse_since(value, now) if value.strip() else None
    # dateparser reads almost anything (`2x` is 2 October): only wording gets that far.
    if when is None and _WORDY.search(value):
        # Only when the short forms did not match: dateparser costs a second to import.
        import dateparser

        when = dateparser.parse(value, settings={
            "TIMEZONE": "UTC", "RETURN_AS_TIMEZONE_AWARE": True, "PREFER_DATES_FROM": "past",
            "RELATIVE_BASE": now.replace(tzinfo=None)})
    if when is None:
        raise ConfigError(f"cannot read {value!r} as a time", key="--since",
                          fix="use 2h, 7d, yesterday, or an ISO date such as 2026-11-30")
    return when.astimezone(dt.UTC)


def _time(value: Any) -> dt.datetime | None:
    try:
        when = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def _mcp_row(rec: dict[str, Any]) -> dict[str, Any]:
    args = rec.get("arguments") if isinstance(rec.get("arguments"), dict) else {}
    # A write's line carries the URI it created; else the argument that names what the call was about.
    named = [rec.get("uri"), *(args.get(k) for k in ("uri", "query", "id", "target", "title"))]
    target = next((str(v) for v in named if v), "")
    return {"log": "mcp", "time": rec.get("ts"), "who": str(rec.get("who") or rec.get("profile") or ""),
            "profile": str(rec.get("profile") or ""), "tool": str(rec.get("tool") or ""),
            "decision": str(rec.get("decision") or ""), "target": target, "reason": str(rec.get("reason") or "")}


def _access_row(rec: dict[str, Any]) -> dict[str, Any]:
    who = str(rec.get("who") or "")
    code = rec.get("exit_code")
    decision = "deny" if rec.get("refused") else "ok" if code in (0, None) else f"exit {code}"
    target = str(rec.get("id") or rec.get("query") or "")
    reason = str(rec.get("refused") or rec.get("command") or rec.get("status") or "")
    return {"log": "access", "time": rec.get("time"), "who": who,
            "profile": who.removeprefix("mcp:") if who.startswith("mcp:") else "",
            "tool": str(rec.get("action") or ""), "decision": decision, "target": target, "reason": reason}


_READERS = {"mcp": (audit.read_lines, _mcp_row), "access": (access_log.read_lines, _access_row)}


def _paths(settings: Settings) -> dict[str, Path]:
    return {"mcp": settings.paths.audit_log, "access": settings.paths.access_log}


def collect(settings: Settings, log: Log = "all", filters: Filters | None = None) -> View:
    """Every row of the chosen logs that passes `filters`, oldest first. A line that is not a record
    (not JSON, not an object, no readable time) is skipped and its number kept in `bad`."""
    filters = filters or Filters()
    view = View()
    for name in LOGS if log == "all" else (log,):
        path = _paths(settings)[name]
        read, shape = _READERS[name]
        lines: jsonl.Lines = read(path)
        view.files[name] = path
        bad = list(lines.bad)
        for number, rec in lines.numbered:
            row = shape(rec)
            at = _time(row["time"])
            if at is None:
                bad.append(number)
                continue
            row["_at"], row["line"] = at, number
            if filters.keep(row):
                view.rows.append(row)
        view.bad[name] = sorted(bad)
    view.rows.sort(key=lambda r: (r["_at"], r["log"], r["line"]))
    return view


def public(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]
