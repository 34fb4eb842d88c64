"""Where `muninn embed migrate` stands, kept in `<workspace>/stack/migrate/state.json` so a killed run
resumes instead of starting over. Everything the migration makes lives under that folder, so `--abort`
is one folder removed; the workspace's own `stack/data` is never written until the switch.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from muninn.core import atomic
from muninn.core.config import Settings

# In order. A phase is written once what it names has begun; what is done within it is in `done`.
PHASES = ("copy", "side", "reindex", "catch-up", "switch", "done")


@dataclass
class State:
    to: str                   # embed.model after the migration
    to_name: str              # embed.model_name after it
    old: str                  # embed.model the vectors were made with
    old_name: str
    phase: str = "copy"
    server_port: int = 0      # the second server's and sidecar's ports, kept so a resume finds them
    embed_port: int = 0
    pids: dict[str, int] = field(default_factory=dict)
    copied: dict[str, list[int]] = field(default_factory=dict)    # content file -> [size, mtime_ns] at the copy
    carried: dict[str, list[int]] = field(default_factory=dict)   # written to the copy since: [size, mtime_ns]
    system: dict[str, str] = field(default_factory=dict)          # accounts/users file -> sha256 at the copy
    trees: list[list[str]] = field(default_factory=list)          # [account, uri] to re-embed, in order
    done: list[list[str]] = field(default_factory=list)           # those re-embedded
    backup: str = ""          # the folder name the old data is moved to at the switch
    files: int = 0            # content files in the trees re-embedded
    vectors: int = 0          # vectors the reindex replies say were embedded
    searched: int = 0         # sample searches the verify passed
    started: str = ""


def folder(settings: Settings) -> Path:
    return settings.paths.stack / "migrate"


def side_data(settings: Settings) -> Path:
    """The copy the second server serves and re-embeds; it becomes `stack/data` at the switch."""
    return folder(settings) / "data"


def _file(settings: Settings) -> Path:
    return folder(settings) / "state.json"


def load(settings: Settings) -> State | None:
    try:
        raw = json.loads(_file(settings).read_text())
    except FileNotFoundError:
        return None
    return State(**raw)


def save(settings: Settings, state: State) -> None:
    folder(settings).mkdir(parents=True, exist_ok=True)
    atomic.write_text(_file(settings), json.dumps(asdict(state), indent=1) + "\n")


def backup_name(stack: Path, old_model: str) -> str:
    """`data.<old model>.bak`, the old data kept aside after the switch; an earlier migration's backup of
    the same model is never overwritten (a second one gets the time in its name)."""
    name = f"data.{old_model.rstrip('/').split('/')[-1]}"
    if not (stack / f"{name}.bak").exists():
        return f"{name}.bak"
    return f"{name}.{dt.datetime.now(dt.UTC).strftime('%Y%m%dT%H%M%S')}.bak"
