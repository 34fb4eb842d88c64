"""What the old server got after the copy (a reader's direct write, a remembered observation, a sync),
carried into the copy through the second server's API, so it is embedded with the new model.

The old data folder is the record: a content file whose size or modification time differs from the
copy's (or from what was carried since) is written again, a new one is written, a removed one is
removed. The last pass runs with the old server stopped, so nothing can land after it.
"""

from __future__ import annotations

import contextlib
import shutil
from dataclasses import dataclass, field

from muninn.core.config import Settings
from muninn.core.errors import NotFound, ServerError
from muninn.plugins.stack import lifecycle, migrate_copy
from muninn.plugins.stack import migrate_side as side_mod
from muninn.plugins.stack import migrate_state as st
from muninn.plugins.stack.migrate_reindex import admin_user


@dataclass
class Carried:
    written: list[str] = field(default_factory=list)    # account/uri
    removed: list[str] = field(default_factory=list)


def pending(settings: Settings, state: st.State) -> tuple[dict[str, list[int]], list[str]]:
    """(changed or new files with their stamps, removed files) in the old data since the copy."""
    now = migrate_copy.stamps(migrate_copy.data(settings))
    known = {**state.copied, **state.carried}
    changed = {rel: stamp for rel, stamp in now.items() if known.get(rel) != stamp}
    removed = [rel for rel in known if rel not in now]
    return changed, removed


def carry(settings: Settings, side: side_mod.Settings, state: st.State, say: lifecycle.Say) -> Carried:
    changed, removed = pending(settings, state)
    done = Carried()
    if not changed and not removed:
        return done
    say(f"migrate: carrying {len(changed)} write(s) and {len(removed)} removal(s) made on the old server "
        "since the copy...")
    old = migrate_copy.data(settings)
    clients: dict[str, object] = {}
    with side_mod.root_client(settings, side) as root:
        for rel in sorted({*changed, *removed}):
            account, uri = migrate_copy.uri_of(rel)
            if account not in clients:
                clients[account] = side_mod.as_admin(settings, side, account, admin_user(root, account) or "")
            client = clients[account]
            if rel in changed:
                _write(client, uri, (old / "viking" / rel).read_text())
                state.carried[rel] = changed[rel]
                done.written.append(f"{account}/{uri}")
            else:
                with contextlib.suppress(NotFound):
                    client.rm(uri)
                state.carried.pop(rel, None)
                state.copied.pop(rel, None)
                done.removed.append(f"{account}/{uri}")
            st.save(settings, state)
    for client in clients.values():
        client.wait()
        client.close()
    return done


def _write(client, uri: str, text: str) -> None:
    """A new file's folders are made first; `replace` of a file that is not there yet is a `create`."""
    parts = uri.removeprefix("viking://").split("/")
    for depth in range(2, len(parts)):
        client.ensure_dir("viking://" + "/".join(parts[:depth]))
    try:
        client.write(uri, text, mode="replace")
    except ServerError as exc:
        if isinstance(exc, NotFound) or "not found" in str(exc).lower() or "exist" in str(exc).lower():
            client.write(uri, text, mode="create")
        else:
            raise


def system_changed(settings: Settings, state: st.State) -> list[str]:
    """Account, user and group lists the old server changed since the copy (a key minted, a reader added)."""
    now = migrate_copy.system_files(migrate_copy.data(settings))
    return sorted(rel for rel in {*now, *state.system} if now.get(rel) != state.system.get(rel))


def copy_system(settings: Settings, state: st.State, changed: list[str]) -> None:
    """With both servers stopped: the old lists replace the copy's (no vectors live in them)."""
    old, new = migrate_copy.data(settings), st.side_data(settings)
    for rel in changed:
        source = old / rel
        if source.exists():
            (new / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, new / rel)
        else:
            (new / rel).unlink(missing_ok=True)
    state.system = migrate_copy.system_files(old)
