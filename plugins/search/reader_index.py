"""Every reader's own keyword index, kept current with no manual step.

Each profile in policy.yaml has one BM25 index (settings.paths.search_index(account, user)) that holds
only what the policy lets that reader read. Three processes write it:
- `muninn sync` (the after_sync hook): each file it wrote goes into the index of every reader whose
  areas cover the file, and into the syncing identity's own;
- `recall_remember` (the MCP server of the writer): the new file, the same way, at once;
- `muninn mcp --profile NAME` at start, and `muninn search-index --profile NAME|--all`: a walk of the
  reader's areas with the reader's own key, incremental (a file whose listed size and modTime are
  unchanged is not read again).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path

from muninn.core import policy as policy_mod
from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.core.errors import MuninnError
from muninn.core.policy import Policy, Profile
from muninn.plugins.search import keyword


def index_path(settings: Settings, profile: Profile) -> Path:
    return settings.paths.search_index(profile.account, profile.user)


def fix_command(profile: Profile) -> str:
    """The command that builds or refreshes this reader's index (named in every warning about it)."""
    return f"muninn search-index --profile {profile.name}"


def covers(profile: Profile, uri: str) -> bool:
    return any(uri == p or uri.startswith(p + "/") for p in profile.read_prefixes)


def policy_or_none(settings: Settings) -> Policy | None:
    """The policy, when there is one: without it only the configured identity has an index."""
    path = policy_mod.path_for(settings)
    return policy_mod.load(path) if path.exists() else None


def after_write(settings: Settings, written: Mapping[str, str], removed: Sequence[str],
                policy: Policy | None = None, own: bool = True) -> dict[str, int]:
    """Put `written` ({uri: text}) into the index of every reader that may read each file, and drop
    `removed` from every index that may hold it. `own` also updates the configured identity's index
    (sync's writer). Returns {index path: files indexed}."""
    targets: dict[Path, Profile | None] = {}
    if own:
        targets[settings.paths.search_index()] = None
    if policy is not None:
        for profile in policy.profiles.values():
            targets.setdefault(index_path(settings, profile), profile)
    out: dict[str, int] = {}
    for path, profile in targets.items():
        mine = {u: t for u, t in written.items() if profile is None or covers(profile, u)}
        gone = [u for u in removed if profile is None or covers(profile, u)]
        if mine:
            out[str(path)] = keyword.index_facts(path, mine).indexed
        if gone and path.exists():
            keyword.remove_facts(path, gone)
    return out


def refresh(settings: Settings, profile: Profile, client: OpenViking | None = None) -> keyword.IndexStats:
    """Walk the reader's areas with the reader's own key (never the owner's) into its index."""
    own = client is None
    client = client or OpenViking.user(settings, profile.account, profile.user)
    try:
        return keyword.build_from_openviking(client, list(profile.read_prefixes), index_path(settings, profile),
                                             settings.search.fetch_workers)
    finally:
        if own:
            client.close()


def problem(settings: Settings, profile: Profile, max_age: dt.timedelta | None = None) -> str | None:
    """Why this reader's index cannot be trusted to be complete, naming its fix; None when it is fine."""
    path = index_path(settings, profile)
    fix = fix_command(profile)
    if not path.exists():
        return f"no keyword index for reader {profile.name!r} at {path}: run `{fix}`"
    walked = keyword.walked_at(path)
    if walked is None:
        return f"keyword index for reader {profile.name!r} was never walked from the server: run `{fix}`"
    if max_age is not None and dt.datetime.now(dt.UTC) - walked > max_age:
        return f"keyword index for reader {profile.name!r} was last walked {walked:%Y-%m-%d %H:%M} UTC: run `{fix}`"
    return None


def refresh_quietly(settings: Settings, profile: Profile, client: OpenViking) -> str | None:
    """The MCP server's start: refresh, and on failure return the warning every search will carry."""
    try:
        refresh(settings, profile, client)
    except MuninnError as exc:
        return (f"keyword index for reader {profile.name!r} may be stale (refresh at start failed: "
                f"{exc.message}): run `{fix_command(profile)}`")
    return None


def store_status(settings: Settings, profile: Profile, areas: Mapping[str, str]) -> list[dict[str, object]]:
    """For each area the reader can read: its file count and newest fact's date in the reader's index,
    and how fresh that index is (seed 001's `recall status`). Local: no server call."""
    path = index_path(settings, profile)
    walked = keyword.walked_at(path)
    fresh = problem(settings, profile) or f"walked {walked:%Y-%m-%d %H:%M} UTC"
    stats = {name: keyword.area_stats(path, uri) if path.exists() else (0, None)
             for name, uri in sorted(areas.items()) if name in profile.areas}
    if path.exists() and walked is None and any(count for count, _ in stats.values()):
        # Each sync and each remember puts its files in here: searches find them. Only a walk adds what
        # was written to the server from elsewhere, so the fix is an option, not a repair.
        fresh = f"kept current by sync; never walked (`{fix_command(profile)}` adds files written elsewhere)"
    return [{"area": name, "uri": areas[name], "files": count, "newest": newest, "index": fresh}
            for name, (count, newest) in stats.items()]


def store_rows(settings: Settings, reader: str | None = None) -> list[dict[str, object]]:
    """`muninn status --stores`: store_status for one reader of policy.yaml, or for every reader."""
    policy = policy_mod.load_for(settings)
    chosen = [policy.profile(reader)] if reader else list(policy.profiles.values())
    return [{"reader": p.name, **row} for p in chosen for row in store_status(settings, p, policy.areas)]
