"""`muninn move-to-root`: a source set to `name: .` moves its files from `<area>/<kind>/` to the area's root.

A source's files went to a sub-folder named by its kind, so the notes `muninn init` configured read
`viking://resources/notes/notes/…`. Since format 6 `init` writes `name: .`; an older workspace whose owner
adds it moves what the server holds under the old folder with this. Every file there moves, muninn's
own, those a reader edited and those written there directly: each is copied with the CLI's key, read
back, and only then removed. Its sync manifest entry moves with it, so the next `sync all` finds
muninn's files unchanged and a reader's edit still a conflict (kept, named), never a second copy. A file
whose new path already holds other bytes is kept where it is and named, and so is one a reader changed
while it moved (read again just before it is removed; the copy made of the earlier bytes is taken back).
The old local export folder goes (the next `export all` writes the new one), and every reader's keyword
index follows the move.

Safe to run again: the old folder is moved only while its export ledger is still there (the move not
done); after that only the files a run kept are tried again (listed beside the sync manifest), so a
folder of the tree that is named after the kind (`notes/notes/x.md` under the new layout) stays.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from muninn.core import registry, upgrade
from muninn.core.config import Settings
from muninn.core.errors import NotFound, ServerError
from muninn.core.workspace import Workspace
from muninn.export import pipeline

if TYPE_CHECKING:   # every command lists the upgrade steps: the client (httpx) only when moving
    from muninn.core.client import OpenViking


@dataclass
class Moved:
    area: str
    moved: list[tuple[str, str]] = field(default_factory=list)   # (old uri, new uri)
    kept: list[str] = field(default_factory=list)                # old uris whose new path holds other bytes
    changed: list[str] = field(default_factory=list)             # old uris a reader changed while they moved

    def as_json(self) -> dict[str, object]:
        return {"area": self.area, "moved": [{"old": o, "new": n} for o, n in self.moved], "kept": self.kept,
                "changed": self.changed}


def move(settings: Settings, client: OpenViking) -> list[Moved]:
    """Every root source's old sub-folder, moved on the server, in its manifest and in the indexes."""
    return [_move_source(settings, client, c) for c in pipeline.configured(settings, check_old=False)
            if c.at_root]


def _move_source(settings: Settings, client: OpenViking, c: pipeline.Configured) -> Moved:
    from muninn.export.sync import Manifest

    old = f"{c.area}/{c.kind}"
    done = Moved(c.area)
    manifest = Manifest.for_target(client, c.area, settings.paths.sync_manifests)
    record = manifest.path.with_name(manifest.path.stem + ".move-to-root-kept")
    whole = c.exported_before_the_move(settings)
    retry = set(json.loads(record.read_text())) if record.is_file() else set()
    try:
        entries = [e for e in client.walk(old) if whole or e.uri in retry] if whole or retry else []
    except NotFound:
        entries = []
    written: dict[str, str] = {}
    with manifest.locked():
        for entry in entries:
            rel = entry.uri[len(old) + 1:]
            new = f"{c.area}/{rel}"
            text = client.read(entry.uri)
            copied = _copy(client, new, text)
            if copied is None:
                done.kept.append(entry.uri)
                continue
            if client.read(entry.uri) != text:
                # A reader wrote to it since it was read: removing it would lose that edit.
                if copied == "created" and client.read(new) == text:
                    client.rm(new)
                done.changed.append(entry.uri)
                continue
            client.rm(entry.uri)
            for table in (manifest.files, manifest.pending):
                if (digest := table.pop(f"{c.kind}/{rel}", None)) is not None:
                    table[rel] = digest
            manifest.save()     # after each file: a run cut short knows what it moved
            written[new] = text
            done.moved.append((entry.uri, new))
        left = sorted(done.kept + done.changed)
        if left:
            record.write_text(json.dumps(left))
        else:
            record.unlink(missing_ok=True)
    if written:
        registry.after_sync(settings, c.area, written, [o for o, _ in done.moved])
    # The export writes them again at the root; left here they would be synced back to the old folder.
    shutil.rmtree(c.old_dir(settings), ignore_errors=True)
    return done


def _copy(client: OpenViking, new: str, text: str) -> str | None:
    """"created" (copied now) or "there" (by a run cut short) when `new` holds `text` afterwards; None: it
    holds other bytes."""
    try:
        held: str | None = client.read(new)
    except NotFound:
        held = None
    if held is None:
        client.write(new, text, mode="create", wait=True)
        if client.read(new) != text:
            raise ServerError(f"{new} does not hold what was copied there, so its old copy was kept",
                              uri=new, fix="compare the two with `muninn read`, then run `muninn move-to-root` "
                                           "again")
        return "created"
    return "there" if held == text else None


def pending(home: Path) -> bool:
    """A source's export folder that repeats its area's last segment (`exports/notes/notes/`): the layout
    before `name: .`. Read from the workspace alone, as every upgrade step is."""
    exports = Workspace(home).exports
    if not exports.is_dir():
        return False
    folders = {ledger.parent.parent for ledger in exports.rglob(f"{pipeline.LEDGER_DIR}/*.json")}
    return any(folder.name == folder.parent.name and folder != exports for folder in folders)


STEP = upgrade.Step(
    6, "a source's files can sit at its area's root (`name: .`, which `muninn init` now writes), not under "
       "viking://resources/notes/notes/; to move yours, add `name: .` to that source in muninn.yaml",
    command="muninn move-to-root && muninn export all && muninn sync all", pending=pending)
