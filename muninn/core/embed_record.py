"""Which embedding model a workspace's stored vectors were made with, kept in `<home>/format.json`
under "embed". OpenViking refuses to start on another model's vectors, so a workspace keeps its
model until the owner migrates (`muninn embed migrate`), whatever a newer muninn's default is.
`upgrade._stamp` keeps this key when it rewrites the format.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path

from muninn.core import atomic, upgrade
from muninn.core.workspace import Workspace


@dataclass(frozen=True)
class EmbedRecord:
    model: str          # embed.model as it was when the vectors were made
    model_name: str     # embed.model_name: part of OpenViking's vector identity
    at: str             # when it was recorded (ISO, UTC)


def recorded(home: Path) -> EmbedRecord | None:
    """The workspace's model, or None when nothing is recorded yet (or the record is unreadable:
    the format check names a damaged format.json)."""
    embed = upgrade.format_data(home).get("embed")
    if not isinstance(embed, dict) or not isinstance(embed.get("model"), str):
        return None
    return EmbedRecord(embed["model"], str(embed.get("model_name") or ""), str(embed.get("at") or ""))


def record(home: Path, model: str, model_name: str) -> EmbedRecord:
    """Record the model the workspace's vectors are made with, keeping format.json's other keys."""
    at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    data = upgrade.format_data(home)
    if "format" not in data:     # never a format file that `read_format` would call damaged
        fmt = upgrade.unstamped_format(home)
        data["format"] = upgrade.current() if fmt is None else fmt
    data["embed"] = {"model": model, "model_name": model_name, "at": at}
    atomic.write_text(Workspace(home).format_file, json.dumps(data) + "\n")
    return EmbedRecord(model, model_name, at)
