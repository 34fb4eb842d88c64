"""What the undeclared-secret detector found, for `muninn redact review`: where (export or server),
file or URI, line, class and fingerprint. Never a value, never the matched text.

    {"version": 1, "export": [...], "server": [...]}

Each run replaces its own part: an export lists what it redacted this time, a server scan what is
on the server now. The file sits beside the allowlist (0600), whose key makes the fingerprints.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from muninn.core import atomic
from muninn.core.config import Settings
from muninn.core.errors import ConfigError

VERSION = 1
PARTS = ("export", "server")


def path_for(settings: Settings) -> Path:
    return settings.paths.redact_allowlist.parent / "review.json"


def load(settings: Settings) -> dict[str, list[dict[str, Any]]]:
    path = path_for(settings)
    if not path.exists():
        return {p: [] for p in PARTS}
    try:
        data = json.loads(path.read_text())
        return {p: list(data.get(p, [])) for p in PARTS}
    except (OSError, ValueError, AttributeError) as exc:
        raise ConfigError(f"the redaction review file is unreadable ({type(exc).__name__})", path=str(path),
                          fix="delete it: the next export and `muninn leak scan` write it again") from None


def record(settings: Settings, part: str, entries: list[dict[str, Any]]) -> None:
    """Replace `part`'s entries; nothing is written when there is no file and nothing to say."""
    path = path_for(settings)
    if not entries and not path.exists():
        return
    data = load(settings)
    data[part] = sorted(entries, key=lambda e: (e["file"], e["line"]))
    atomic.write_text(path, json.dumps({"version": VERSION, **data}, indent=1) + "\n", mode=0o600)
