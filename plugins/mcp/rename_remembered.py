"""`muninn rename-remembered`: remembered facts written before format 5 are renamed by date and id.

recall_remember used to slug the title into the file name (`<time>-<title words>-<6 hex>.md`), and a name
is shown outside the untrusted-data label (hits[].uri, briefing lines, recall_list). Each such file is
copied to `<time>-<12 hex>.md` with the writer's own key, read back, and only then removed; every
reader's keyword index follows. The new name comes from the old one, so a run cut short and run again
finds its copy instead of making a second one.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from muninn.core import upgrade
from muninn.core.config import Settings
from muninn.core.errors import NotFound, ServerError
from muninn.core.workspace import Workspace

if TYPE_CHECKING:   # every command lists the upgrade steps: the client and the indexes only when renaming
    from muninn.core import policy as policy_mod
    from muninn.core.client import OpenViking

OLD = re.compile(r"^(\d{8}T\d{6}Z)-.+-([0-9a-f]{6})\.md$")
FOLDERS = ("observations", "plans")


@dataclass
class Renamed:
    old: str
    new: str


def new_name(name: str) -> str | None:
    """The name an old-style remembered file gets; None for a name that is not old-style."""
    m = OLD.match(name)
    return f"{m[1]}-{m[2]}{hashlib.sha256(name.encode()).hexdigest()[:6]}.md" if m else None


def old_named(uri: str) -> bool:
    folder, _, name = uri.rpartition("/")
    return any(f"/{f}/" in folder + "/" for f in FOLDERS) and new_name(name) is not None


def pending(home: Path) -> bool:
    """Whether any reader's keyword index still holds an old-style remembered name (local, no server call)."""
    from muninn.plugins.search import keyword

    folder = Workspace(home).search_indexes
    paths = sorted(folder.glob("*.sqlite")) if folder.is_dir() else []
    return any(old_named(u) for path in paths for u in keyword.uris(path))


def rename(settings: Settings, policy: policy_mod.Policy, say: Callable[[str], None]) -> list[Renamed]:
    from muninn.core.client import OpenViking
    from muninn.plugins.search import reader_index

    done: list[Renamed] = []
    seen: set[str] = set()
    for prof in policy.profiles.values():
        if prof.remember_to is None or prof.remember_to in seen:
            continue
        seen.add(prof.remember_to)
        with OpenViking.user(settings, prof.account, prof.user) as client:   # the writer may write there
            for folder in FOLDERS:
                try:
                    entries = list(client.walk(f"{prof.remember_to}/{folder}"))
                except NotFound:
                    continue
                for entry in entries:
                    if (got := _move(client, entry.uri)) is not None:
                        moved, text = got
                        reader_index.after_write(settings, {moved.new: text}, [moved.old], policy, own=False)
                        say(f"{moved.old} -> {moved.new}")
                        done.append(moved)
    return done


def _move(client: OpenViking, uri: str) -> tuple[Renamed, str] | None:
    parent, _, name = uri.rpartition("/")
    new = new_name(name)
    if new is None:
        return None
    target = f"{parent}/{new}"
    text = client.read(uri)
    with contextlib.suppress(ServerError):   # a run cut short made the copy already: read back below
        client.write(target, text, mode="create")
    if client.read(target) != text:
        raise ServerError(f"{target} does not hold what {uri} holds, so {uri} was kept",
                          fix="compare the two with `muninn read`, remove the wrong one, run it again")
    client.rm(uri)
    return Renamed(uri, target), text


STEP = upgrade.Step(5, "remembered facts are named by their time and an id, no word of what the agent wrote",
                    command="muninn rename-remembered", pending=pending)
