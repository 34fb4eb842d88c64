"""Re-embed every account's trees on the second server with OpenViking's own `POST /content/reindex`.

Accounts come from the server's account list (the copy holds every account, whoever made it), so an
account made by hand, not by policy.yaml, is re-embedded too. One reindex call per tree, each waited
for: a tree is the unit of progress and of resuming (the state records each tree once done).
"""

from __future__ import annotations

import time

from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.core.errors import ServerError
from muninn.plugins.stack import lifecycle, migrate_copy
from muninn.plugins.stack import migrate_side as side_mod
from muninn.plugins.stack import migrate_state as st

BUSY_RETRY_S = 3.0


def admin_user(root: OpenViking, account: str) -> str | None:
    users = root.list_users(account)
    return users[0] if users else None


def trees(settings: Settings, side: Settings) -> list[list[str]]:
    """[account, uri] for each top-level tree: every entry of viking://resources, every folder of
    viking://agent, and viking://user (every user's memories and resources)."""
    out: list[list[str]] = []
    with side_mod.root_client(settings, side) as root:
        accounts = sorted(a["account_id"] for a in root.list_accounts() if a.get("account_id"))
        for account in accounts:
            user = admin_user(root, account)
            if user is None:
                continue
            with side_mod.as_admin(settings, side, account, user) as client:
                for top in ("viking://resources", "viking://agent"):
                    out += [[account, e.uri] for e in sorted(client.ls(top), key=lambda e: e.uri)
                            if (e.is_dir or top == "viking://resources") and not _hidden(e.uri)]
                out.append([account, "viking://user"])
    return out


def _hidden(uri: str) -> bool:
    return uri.rsplit("/", 1)[-1].startswith(".")


def files_in(settings: Settings, account: str, uri: str) -> int:
    prefix = f"{account}/{uri.removeprefix('viking://')}"
    return sum(1 for rel, _ in migrate_copy.content_files(st.side_data(settings))
               if rel == prefix or rel.startswith(prefix + "/"))


def run(settings: Settings, side: Settings, state: st.State, say: lifecycle.Say) -> None:
    if not state.trees:
        state.trees = trees(settings, side)
        st.save(settings, state)
    users: dict[str, str | None] = {}
    with side_mod.root_client(settings, side) as root:
        for account in {a for a, _ in state.trees}:
            users[account] = admin_user(root, account)
    total = len(state.trees)
    for n, (account, uri) in enumerate(state.trees, 1):
        if [account, uri] in state.done:
            continue
        count = files_in(settings, account, uri)
        say(f"migrate: [{n}/{total}] {account} {uri}: re-embedding {count} file(s) with {state.to}...")
        with side_mod.as_admin(settings, side, account, users[account] or "") as client:
            reply = _reindex(client, uri)
        embedding = (reply.get("queue_status") or {}).get("Embedding") or {}
        failed = int(reply.get("failed_records") or 0) + int(embedding.get("error_count") or 0)
        if failed:
            raise ServerError(f"OpenViking's reindex of {account} {uri} failed for {failed} record(s): "
                              f"{'; '.join(map(str, embedding.get('errors') or reply.get('warnings') or []))[:300]}",
                              fix=f"see {st.folder(settings) / 'logs'}, then rerun `muninn embed migrate` "
                                  "(done trees are kept)")
        state.done.append([account, uri])
        state.files += count
        state.vectors += int(embedding.get("processed") or 0)
        st.save(settings, state)


def _reindex(client: OpenViking, uri: str) -> dict:
    """A reindex of a killed run may still be going on the second server: wait for it, then run ours
    (a forced reindex of a tree already re-embedded only does the work again)."""
    while True:
        try:
            return client.reindex(uri, force=True)
        except ServerError as exc:
            if exc.status != 409 and "in progress" not in str(exc):
                raise
        time.sleep(BUSY_RETRY_S)
