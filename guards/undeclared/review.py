"""What redaction acted on, for `muninn redact review`: every redaction of the last export, placed in
its source (file and line; `line` None when not certain, export/source_lines.py), and the undeclared
secrets the last `muninn leak scan` found on the server (URI, line, class). A pattern hit carries its
fingerprint, a known value its secret id. Never a value, never the matched text.

    {"version": 2, "export": [...], "server": [...]}

Each run replaces its own part: an export lists what it redacted this time (`count`: how many times
at that place, once per field the text reached), a server scan what is on the server now. The file
sits beside the allowlist (0600), whose key makes the fingerprints. A version 1 file's rows (only the
undeclared rule, no kind) read as pattern hits of that rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from muninn.core import atomic
from muninn.core.config import Settings
from muninn.core.errors import ConfigError

VERSION = 2
PARTS = ("export", "server")


def path_for(settings: Settings) -> Path:
    return settings.paths.redact_allowlist.parent / "review.json"


def load(settings: Settings) -> dict[str, list[dict[str, Any]]]:
    path = path_for(settings)
    if not path.exists():
        return {p: [] for p in PARTS}
    try:
        data = json.loads(path.read_text())
        return {p: [_upgraded(e) for e in data.get(p, [])] for p in PARTS}
    except (OSError, ValueError, AttributeError) as exc:
        raise ConfigError(f"the redaction review file is unreadable ({type(exc).__name__})", path=str(path),
                          fix="delete it: the next export and `muninn leak scan` write it again") from None


def _upgraded(e: dict[str, Any]) -> dict[str, Any]:
    from muninn.guards.undeclared.detect import RULE

    return {"kind": "pattern", "rule": RULE, "secret_id": None, "count": 1, **e}


def merged(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per place and name: a hit in a heading reaches the title, the breadcrumb and the body,
    three markers in the fact but one thing to fix in the note. A place not known (line None) stays
    one row per marker: two of them may be two places."""
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for i, e in enumerate(entries):
        key = (e["file"], e["line"], e.get("kind"), e.get("rule"), e.get("secret_id"), e.get("fingerprint"))
        if e["line"] is None:
            key += (i,)
        if key in out:
            out[key]["count"] += 1
        else:
            out[key] = {**e, "count": 1}
    return list(out.values())


def record(settings: Settings, part: str, entries: list[dict[str, Any]]) -> None:
    """Replace `part`'s entries; nothing is written when there is no file and nothing to say."""
    path = path_for(settings)
    if not entries and not path.exists():
        return
    data = load(settings)
    data[part] = sorted(merged(entries), key=lambda e: (e["file"], e["line"] is None, e["line"] or 0))
    atomic.write_text(path, json.dumps({"version": VERSION, **data}, indent=1) + "\n", mode=0o600)
