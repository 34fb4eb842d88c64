"""`muninn observe`: the hook that writes the observation log `muninn watch` and export read.

Claude Code runs it after every tool call (PostToolUse) with the call on stdin: `session_id`, `cwd`,
`tool_name`, `tool_input`, `tool_response`, `tool_use_id` and no time, so the time is stamped here. Each
call becomes one line of the log. Input and output are redacted (every known secret value, as export
does, and the pattern pass) and then capped, before anything is written: the log is a plain file that
backups and editors read, so a value never reaches it. When the known values cannot be loaded (a locked
vault) the line keeps the tool and the time and withholds input and output rather than write them raw.

At the end of a session (SessionEnd, which carries only a reason) it runs one `muninn watch` cycle, so
the session's calls are findable in the next one.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from muninn.core import atomic
from muninn.core.config import Settings
from muninn.core.errors import ConfigError, MuninnError
from muninn.export import pipeline
from muninn.export.sources import observations
from muninn.guards.undeclared import detect as undeclared

KIND = "observations"
_SAFE_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")


@dataclass(frozen=True)
class Log:
    path: Path
    max_input: int
    max_output: int
    agent: str | None


def log_for(settings: Settings) -> Log:
    """The observation log the hook appends to: the one `observations` source (the first, if several)."""
    found = [c for c in pipeline.configured(settings) if c.kind == KIND] if settings.sources else []
    if not found:
        raise ConfigError("no `observations` source under `sources:`", path=str(settings.source_file or "muninn.yaml"),
                          fix="add {kind: observations, path: observations.jsonl, area: viking://resources/agents/"
                              "sessions} (`muninn init` writes it)")
    c = found[0]
    opts = observations.ObservationOptions.model_validate(c.options or {})
    return Log(path=c.path, max_input=opts.max_input, max_output=opts.max_output, agent=opts.agent)


class Scrub:
    """Export's own redaction: every known value in every form, then the patterns, then the pattern rules
    over the bytes any dump in the text spells. The redactor alone: the leak gate export builds beside it
    would make every form of every value a second time, for a line the export gates anyway."""

    def __init__(self, settings: Settings) -> None:
        from muninn.export.pipeline import Guards

        self.redactor = Guards.redactor_for_settings(settings)

    def __call__(self, text: str) -> str:
        if not text:
            return text
        # A dump of a token the owner never declared: the pattern rules over the bytes the dump spells.
        return self.redactor.redact_dumped(self.redactor.redact(text).text)

    def ident(self, value: str) -> str:
        """An id the client made (session, tool call): random by design, so the entropy readings are no
        finding there; a known value or a token's shape is."""
        done = self.redactor.redact(value)
        if all(h.kind == "pattern" and (h.rule == undeclared.RULE or "Entropy" in h.rule) for h in done.hits):
            return value
        return done.text


def redactor_for(settings: Settings) -> Scrub:
    return Scrub(settings)


def row(payload: Mapping[str, Any], log: Log, redact: Callable[[str], str] | None,
        now: dt.datetime | None = None, withheld: str = "") -> dict[str, Any]:
    """One log line for one tool call. `redact` None: input and output are withheld (`withheld` says why)."""
    moment = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    # Every field that reaches the log goes through the redaction, whatever its JSON type.
    scrub = redact if redact is not None else (lambda text: text)
    out: dict[str, Any] = {"ts": moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                           "tool": _name(scrub(observations.redacted_text(payload.get("tool_name"))))}
    if redact is None:
        out["input"] = out["output"] = f"[withheld: {withheld or 'known secret values could not be loaded'}]"
    else:
        out["input"] = observations.cap(observations.redacted_text(payload.get("tool_input"), redact), log.max_input)
        out["output"] = observations.cap(observations.redacted_text(payload.get("tool_response"), redact),
                                         log.max_output)
    for key, field in (("session", "session_id"), ("id", "tool_use_id")):
        value = payload.get(field)
        if isinstance(value, str) and _SAFE_ID.match(value):
            # Without the known values an id is withheld too: it could be anything an agent chose.
            out[key] = redact.ident(value) if isinstance(redact, Scrub) else None
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and cwd.strip():
        project = Path(cwd).name
        out["project"] = redact(project) if redact is not None else None
    return {k: v for k, v in out.items() if v is not None}


def _name(value: object) -> str:
    name = str(value or "").strip()
    return name[:200] if name else "unknown-tool"


def append(log: Log, line: dict[str, Any]) -> None:
    """One JSON line, appended with O_APPEND in one write: two sessions' hooks never interleave halves."""
    log.path.parent.mkdir(parents=True, exist_ok=True)
    data = (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8")
    with atomic.translated(log.path):
        fd = os.open(log.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)


def is_session_end(payload: Mapping[str, Any]) -> bool:
    event = payload.get("hook_event_name")
    return event == "SessionEnd" or (event is None and "reason" in payload and "tool_name" not in payload)


def observe(settings: Settings, payload: Mapping[str, Any], now: dt.datetime | None = None) -> str:
    """Record one tool call (or, at session end, run one watch cycle). Returns what was done, one line."""
    if is_session_end(payload):
        from muninn.nightly import watch

        result = watch.cycle(settings)
        return "session end: " + watch.line(result)
    if "tool_name" not in payload:
        return f"ignored: a {payload.get('hook_event_name') or 'payload'} without tool_name"
    log = log_for(settings)
    try:
        redact: Scrub | None = redactor_for(settings)
        why = ""
    except MuninnError as exc:
        redact, why = None, exc.message
    append(log, row(payload, log, redact, now, why))
    return f"recorded {_name(payload.get('tool_name'))} in {log.path}" + (f" (input and output withheld: {why})"
                                                                          if redact is None else "")
