"""Every reader's own keyword index, kept current with no manual step.

Each profile in policy.yaml has one BM25 index (settings.paths.search_index(account, user)) that holds
only what the policy lets that reader read. Three processes write it:
- `muninn sync` (the after_sync hook): each file it wrote goes into the index of every reader whose
  areas cover the file, and into the syncing identity's own;
- `recall_remember` (the MCP server of the writer): the new file, the same way, at once;
- `muninn mcp --profile NAME` at start, and `muninn search-index --profile NAME|--all`: a walk of the
  reader's areas with the reader's own key, incremental (a file whose listed size and modTime are
  unchanged is not read again).
What goes into a reader's index is the policy's one decision (Profile.may): a file in a nested area the
reader does not hold never enters it, and a walk and `purge` take out what is there already.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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
    return profile.may("read", uri)


def is_own(settings: Settings, profile: Profile) -> bool:
    """Whether this reader's index is also the configured identity's (the one `muninn sync` feeds)."""
    return index_path(settings, profile) == settings.paths.search_index()


def holds(profile: Profile, uri: str, own: bool) -> bool:
    """May this reader's index hold `uri`? What its policy lets it read; the configured identity's own
    index (`own`) also keeps what it synced outside every policy area, where the policy says nothing."""
    return covers(profile, uri) or (own and profile.outside(uri))


def policy_or_none(settings: Settings) -> Policy | None:
    """The policy, when there is one: without it only the configured identity has an index."""
    path = policy_mod.path_for(settings)
    return policy_mod.load(path) if path.exists() else None


def after_write(settings: Settings, written: Mapping[str, str], removed: Sequence[str],
                policy: Policy | None = None, own: bool = True) -> dict[str, int]:
    """Put `written` ({uri: text}) into the index of every reader that may read each file, and drop
    `removed` from every index that may hold it. `own` also updates the configured identity's index
    (sync's writer). Returns {index path: files indexed}."""
    targets: dict[Path, Callable[[str], bool]] = {}
    profiles = list(policy.profiles.values()) if policy is not None else []
    for profile in profiles:
        mine = own and is_own(settings, profile)   # sync writing its own identity's index
        targets[index_path(settings, profile)] = lambda u, p=profile, m=mine: holds(p, u, m)
    if own:
        targets.setdefault(settings.paths.search_index(), lambda u: True)   # no reader of the policy: all
    out: dict[str, int] = {}
    for path, keep in targets.items():
        mine = {u: t for u, t in written.items() if keep(u)}
        gone = list(removed)   # a removal is harmless where the file never was
        if mine:
            out[str(path)] = keyword.index_facts(path, mine).indexed
        if gone and path.exists():
            keyword.remove_facts(path, gone)
    return out


def refresh(settings: Settings, profile: Profile, client: OpenViking | None = None) -> keyword.IndexStats:
    """Walk the reader's areas with the reader's own key (never the owner's) into its index."""
    # Purged first: the walk would drop a denied file as vanished, leaving its text in the file's free pages.
    purged = purge(settings, profile).files
    own = client is None
    client = client or OpenViking.user(settings, profile.account, profile.user)
    try:
        stats = keyword.build_from_openviking(client, list(profile.read_prefixes), index_path(settings, profile),
                                              settings.search.fetch_workers, visible=lambda u: covers(profile, u))
    finally:
        if own:
            client.close()
    stats.removed += purged
    return stats


@dataclass
class Purged:
    files: int = 0       # rows taken out of the keyword index
    vectors: int = 0     # vectors taken out of the search vector cache beside it


def denied(settings: Settings, profile: Profile) -> list[str]:
    """The files this reader's index holds that its policy does not let it read (`policy check`)."""
    path = index_path(settings, profile)
    if not path.exists():
        return []
    mine = is_own(settings, profile)
    return [u for u in keyword.uris(path) if not holds(profile, u, mine)]


def leaks(settings: Settings, policy: Policy) -> list[dict[str, object]]:
    """Every reader whose index holds a file its policy does not let it read: `policy check` fails on these."""
    out: list[dict[str, object]] = []
    for p in policy.profiles.values():
        if found := denied(settings, p):
            out.append({"reader": p.name, "index": str(index_path(settings, p)), "files": len(found),
                        "examples": found[:3], "fix": fix_command(p)})
    return out


def purge(settings: Settings, profile: Profile) -> Purged:
    """Take out of the reader's index every file it may not hold, and out of its vector cache every
    vector that is not of a text its index still holds (a vector is a trace of its text)."""
    gone = denied(settings, profile)
    if not gone:
        return Purged()
    path = index_path(settings, profile)
    done = Purged(files=keyword.remove_facts(path, gone))
    keyword.compact(path)
    done.vectors = keep_vectors(settings, path)
    return done


def keep_vectors(settings: Settings, path: Path) -> int:
    """Drop from the vector caches beside the index at `path` every vector that is not of a text the index
    still holds (a vector is a trace of its text); returns how many went."""
    from muninn.plugins.search import dense, fact_vectors

    dropped = 0
    first, second = dense.cache_paths(path)
    if first.exists() or second.exists():
        index = keyword.KeywordIndex(path)
        try:
            keep = {first: fact_vectors.texts(index, fact_vectors.window_chars(settings)),
                    second: fact_vectors.second_texts(index)}
        finally:
            index.close()
        # A second-model cache whose model is off now is dropped whole by keep_only: no key is of its model.
        models = {first: settings.embed, second: settings.embed.second or settings.embed}
        for cache, texts in keep.items():
            if not cache.exists():
                continue
            scorer = dense.DenseScorer(models[cache], cache)
            try:
                dropped += scorer.keep_only(texts)
            finally:
                scorer.close()
    return dropped


def forget(settings: Settings, written: Mapping[str, str], removed: Sequence[str],
           policy: Policy | None = None) -> int:
    """What `leak purge` rewrote or removed on the server, in every local copy at once: each reader's index
    holds the new text (or none), and no vector of the old text stays. Returns the vectors dropped."""
    after_write(settings, written, removed, policy)
    paths = [index_path(settings, p) for p in (policy.profiles.values() if policy is not None else [])]
    paths.append(settings.paths.search_index())
    dropped = 0
    for path in dict.fromkeys(paths):
        if path.exists():
            keyword.compact(path)        # the old text must not linger in the file's free pages
            dropped += keep_vectors(settings, path)
    return dropped


def follow_policy(settings: Settings, policy: Policy) -> dict[str, str]:
    """Every reader's local copy brought to `policy` (`policy apply`), both ways: rows it may no longer
    read are purged now, and a walk with its own key reads what it newly may (the walk is incremental,
    so a second run after an interruption reads only what the first did not). {reader: what happened}."""
    out: dict[str, str] = {}
    for profile in policy.profiles.values():
        if not index_path(settings, profile).exists():
            continue          # no local copy yet: its first session builds it under this policy
        try:
            stats = refresh(settings, profile)
        except MuninnError as exc:
            out[profile.name] = f"not refreshed ({exc.message}): {fix_command(profile)}"
            continue
        out[profile.name] = f"{stats.indexed} read, {stats.removed} taken out"
    return out


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
    # Each file counts once, in the area that decides it (a nested area has its own row), and only if
    # the reader may read it.
    stats = {name: keyword.area_stats(path, uri, lambda u, a=name: _decided_by(profile, u) == a)
             if path.exists() else (0, None)
             for name, uri in sorted(areas.items()) if name in profile.areas}
    if path.exists() and walked is None and any(count for count, _ in stats.values()):
        # Each sync and each remember puts its files in here: searches find them. Only a walk adds what
        # was written to the server from elsewhere, so the fix is an option, not a repair.
        fresh = f"kept current by sync; never walked (`{fix_command(profile)}` adds files written elsewhere)"
    return [{"area": name, "uri": areas[name], "files": count, "newest": newest, "index": fresh}
            for name, (count, newest) in stats.items()]


def _decided_by(profile: Profile, uri: str) -> str | None:
    area = profile.decider(uri)
    return area.name if area is not None and covers(profile, uri) else None


def store_rows(settings: Settings, reader: str | None = None) -> list[dict[str, object]]:
    """`muninn status --stores`: store_status for one reader of policy.yaml, or for every reader."""
    policy = policy_mod.load_for(settings)
    chosen = [policy.profile(reader)] if reader else list(policy.profiles.values())
    return [{"reader": p.name, **row} for p in chosen for row in store_status(settings, p, policy.areas)]
