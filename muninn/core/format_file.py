"""What `<home>/format.json` holds, read without judging it: its keys, and the format of a home that has no
such file. Below both writers of the file: muninn.core.upgrade (the "format" stamp) and
muninn.core.embed_record (the "embed" key), which each keep the other's keys when they rewrite it.
"""

from __future__ import annotations

import json
from pathlib import Path

from muninn.core.workspace import Workspace


def format_data(home: Path) -> dict:
    """Every key of format.json ({} when absent or unreadable: `upgrade.read_format` names a damaged file)."""
    try:
        data = json.loads(Workspace(home).format_file.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def unstamped_format(home: Path) -> int | None:
    """The format of a home with no format file: 0 when it holds anything (from before format files),
    None when there is no workspace yet."""
    return 0 if home.is_dir() and any(home.iterdir()) else None
