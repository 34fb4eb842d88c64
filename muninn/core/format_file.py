"""`<home>/format.json`: the workspace's format stamp and the record of its embedding model. Read here, once
per process for each version of the file (a command asks for it several times: the settings, the upgrade
check, `muninn up`'s model check), and written whole. Below both writers of the file: muninn.core.upgrade
(the "format" stamp) and muninn.core.embed_record (the "embed" key), which each keep the other's keys.
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from muninn.core import atomic
from muninn.core.errors import ExitCode, MuninnError
from muninn.core.workspace import Workspace


class DamagedFormat(MuninnError):
    """format.json is there but names no format. muninn.core.upgrade says what to write into it."""

    exit_code = ExitCode.UPGRADE_NEEDED

    def __init__(self, file: Path) -> None:
        super().__init__(f"{file} is not a workspace format file", fix="remove it to redo the upgrade")
        self.file = file


@dataclass(frozen=True)
class EmbedRecord:
    model: str          # embed.model as it was when the vectors were made
    model_name: str     # embed.model_name: part of OpenViking's vector identity
    at: str             # when it was recorded (ISO, UTC)


_NOT_JSON = object()
# file -> ((inode, mtime, size), its parsed content). A write replaces the file (a new inode), so another
# process's write is seen; this process's own writes go through `write`, which keeps what it wrote.
_seen: dict[Path, tuple[tuple[int, int, int], Any]] = {}


def _version(file: Path) -> tuple[int, int, int]:
    st = os.stat(file)
    return st.st_ino, st.st_mtime_ns, st.st_size


def _content(file: Path) -> Any:
    """The parsed file (_NOT_JSON when it is not JSON); OSError when it cannot be read."""
    version = _version(file)
    if (hit := _seen.get(file)) is not None and hit[0] == version:
        return hit[1]
    try:
        content = json.loads(file.read_text())
    except ValueError:
        content = _NOT_JSON
    _seen[file] = (version, content)
    return content


def format_data(home: Path) -> dict:
    """Every key of format.json ({} when absent or unreadable: `read_format` names a damaged file). A copy:
    the caller may change it."""
    try:
        data = _content(Workspace(home).format_file)
    except OSError:
        return {}
    return copy.deepcopy(data) if isinstance(data, dict) else {}


def unstamped_format(home: Path) -> int | None:
    """The format of a home with no format file: 0 when it holds anything (from before format files),
    None when there is no workspace yet."""
    return 0 if home.is_dir() and any(home.iterdir()) else None


def read_format(home: Path) -> int | None:
    """The workspace's format; 0 for a workspace from before format files; None for no workspace.
    DamagedFormat when the file is there but names no format."""
    file = Workspace(home).format_file
    if not file.is_file():
        return unstamped_format(home)
    content = _content(file)
    try:
        return int(content["format"])
    except (ValueError, KeyError, TypeError):
        raise DamagedFormat(file) from None


def recorded(home: Path) -> EmbedRecord | None:
    """The model the workspace's vectors were made with (muninn.core.embed_record), or None when nothing is
    recorded yet (or the record is unreadable: the format check names a damaged format.json)."""
    embed = format_data(home).get("embed")
    if not isinstance(embed, dict) or not isinstance(embed.get("model"), str):
        return None
    return EmbedRecord(embed["model"], str(embed.get("model_name") or ""), str(embed.get("at") or ""))


def write(home: Path, data: dict) -> None:
    """Replace format.json with `data` (whole or nothing), and read it as written from now on."""
    file = Workspace(home).format_file
    atomic.write_text(file, json.dumps(data) + "\n")
    _seen[file] = (_version(file), copy.deepcopy(data))
