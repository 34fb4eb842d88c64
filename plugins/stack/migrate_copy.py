"""The copy of the workspace's server data, and what a data folder holds, file by file.

A live copy is not safe: the vector store is a LevelDB-style store with a write-ahead log, and the
queue and audit stores are SQLite in WAL mode, so files copied mid-write disagree. The server is
stopped for the copy only (its sidecar keeps running) and started again right after, so the old
server answers during the whole re-embedding.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path

from muninn.core.config import Settings
from muninn.plugins.stack import lifecycle
from muninn.plugins.stack import migrate_state as st

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


def copy(settings: Settings, state: st.State, say: lifecycle.Say, config_file: Path | None = None) -> None:
    """Copy stack/data to the migration's folder with the server stopped, then start it again."""
    target = st.side_data(settings)
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
