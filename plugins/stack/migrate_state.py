"""Where `muninn embed migrate` stands, and the copy of the data it works on.

The state is kept in `<workspace>/stack/migrate/state.json` so a killed run resumes instead of starting
over. Everything the migration makes lives under that folder, so `--abort` is one folder removed; the
workspace's own `stack/data` is never written until the switch.

A live copy is not safe: the vector store is a LevelDB-style store with a write-ahead log, and the
queue and audit stores are SQLite in WAL mode, so files copied mid-write disagree. The server is
stopped for the copy only (its sidecar keeps running) and started again right after, so the old
server answers during the whole re-embedding.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from muninn.core import atomic
from muninn.core.config import Settings
from muninn.plugins.stack import lifecycle

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


# --- The copy of the data, and what a data folder holds, file by file ----------------------------------------------

# Under data/viking/<account>/: what a reader or sync writes. `_system` and `system` are the server's
# own (users, tasks, templates), sessions are not muninn's, and dot files are derived (.abstract.md...).
_SKIPPED = {"_system", "system"}


def data(settings: Settings) -> Path:
    return settings.paths.stack / "data"


def content_files(root: Path) -> Iterator[tuple[str, Path]]:
    """(`<account>/<path>`, file) for every content file of the data folder `root`."""
    viking = root / "viking"
    if not viking.is_dir():
        return
    for account in sorted(p for p in viking.iterdir() if p.is_dir() and p.name not in _SKIPPED):
        for path in sorted(account.rglob("*")):
            rel = path.relative_to(account).parts
            if (path.is_file() and not any(part.startswith(".") for part in rel)
                    and rel[0] not in _SKIPPED and "sessions" not in rel):
                yield f"{account.name}/{'/'.join(rel)}", path


def stamps(root: Path) -> dict[str, list[int]]:
    out = {}
    for rel, path in content_files(root):
        info = path.stat()
        out[rel] = [info.st_size, info.st_mtime_ns]
    return out


def uri_of(rel: str) -> tuple[str, str]:
    """`<account>/resources/a.md` -> (account, viking://resources/a.md)."""
    account, _, path = rel.partition("/")
    return account, f"viking://{path}"


def system_files(root: Path) -> dict[str, str]:
    """sha256 of every account, user and group list: what a key, a reader or an account added changes."""
    viking = root / "viking"
    found = [*viking.glob("_system/*.json"), *viking.glob("*/_system/*.json")] if viking.is_dir() else []
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(found)}


def copy(settings: Settings, state: State, say: lifecycle.Say, config_file: Path | None = None) -> None:
    """Copy stack/data to the migration's folder with the server stopped, then start it again."""
    target = side_data(settings)
    partial = target.with_name("data.partial")
    shutil.rmtree(partial, ignore_errors=True)
    was_running = lifecycle.stop_server(settings, say)
    try:
        say(f"migrate: copying {data(settings)} (the server is stopped for the copy only)...")
        shutil.copytree(data(settings), partial, symlinks=True)
        state.copied = stamps(data(settings))
        state.system = system_files(data(settings))
    finally:
        if was_running:
            lifecycle.up(settings, say=say, config_file=config_file)
    partial.rename(target)      # a folder named data is a whole copy
    say(f"migrate: copied {len(state.copied)} content file(s); the old server answers meanwhile")
