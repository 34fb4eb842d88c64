"""Every reader's keyword index: which files go into which index is the policy's decision, a walk is
incremental, and every warning names the fix for that reader."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest
import yaml

from muninn.core import config
from muninn.core import policy as policy_mod
from muninn.core.client import Entry
from muninn.plugins.search import keyword, reader_index

AREAS = {"shared": "viking://resources/shared", "raven": "viking://resources/agents/raven",
         "bob": "viking://resources/agents/bob", "wren": "viking://resources/agents/wren"}
READERS = {
    "owner": {"kind": "owner", "account": "home", "user": "owner",
              "areas": {"shared": "manage", "raven": "manage", "bob": "manage"}, "remember_to": "shared"},
    "raven": {"kind": "agent", "account": "home", "user": "raven", "areas": {"shared": "read", "raven": "write"}},
    "wren": {"kind": "agent", "account": "home", "user": "wren", "areas": {"shared": "read", "wren": "write"}},
}

# (file, the readers whose index must hold it): every other reader's index must not.
ROUTES = [
    ("viking://resources/shared/runbook.md", {"owner", "raven", "wren"}),
    ("viking://resources/shared/deep/a/b/c.md", {"owner", "raven", "wren"}),
    ("viking://resources/agents/raven/observations/2026-11/x.md", {"owner", "raven"}),
    ("viking://resources/agents/bob/diary.md", {"owner"}),
    ("viking://resources/agents/wren/notes.md", {"wren"}),
    ("viking://resources/agents/raven-evil/x.md", set()),     # a prefix of a name is not the area
    ("viking://resources/sharedx/y.md", set()),
    ("viking://resources/agents/elsewhere.md", set()),
]


def _fact(title: str, body: str) -> str:
    return f"---\nsource: notes\n---\n# {title}\n{body}\n"


@pytest.fixture
def setup(tmp_path: Path) -> tuple[config.Settings, policy_mod.Policy]:
    pol = tmp_path / "policy.yaml"
    pol.write_text(yaml.safe_dump({"version": 1, "areas": AREAS, "readers": READERS}))
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "ws"), "guard": {"policy": str(pol)},
                                   "openviking": {"account": "home", "user": "owner"}}))
    settings = config.load(cfg)
    return settings, policy_mod.load(pol)


def _held(settings: config.Settings, profile: policy_mod.Profile, uri: str) -> bool:
    path = reader_index.index_path(settings, profile)
    if not path.exists():
        return False
    idx = keyword.KeywordIndex(path)
    try:
        return idx.text(uri) is not None
    finally:
        idx.close()


@pytest.mark.parametrize("uri, readers", ROUTES, ids=[r[0].removeprefix("viking://resources/") for r in ROUTES])
def test_a_written_file_goes_into_exactly_the_indexes_of_the_readers_who_may_read_it(setup, uri, readers) -> None:
    settings, pol = setup
    reader_index.after_write(settings, {uri: _fact("Zorblax", "zorblax flushed")}, [], pol, own=False)
    held = {name for name, p in pol.profiles.items() if _held(settings, p, uri)}
    assert held == readers


@pytest.mark.parametrize("uri, readers", ROUTES, ids=[r[0].removeprefix("viking://resources/") for r in ROUTES])
def test_a_removed_file_leaves_every_index_that_held_it(setup, uri, readers) -> None:
    settings, pol = setup
    keep = "viking://resources/shared/keep.md"
    reader_index.after_write(settings, {uri: _fact("Zorblax", "x"), keep: _fact("Keep", "y")}, [], pol, own=False)
    reader_index.after_write(settings, {}, [uri], pol, own=False)
    for p in pol.profiles.values():
        assert not _held(settings, p, uri)
        assert _held(settings, p, keep) == (p.name in {"owner", "raven", "wren"})


def test_sync_hook_also_feeds_the_syncing_identity_and_reads_the_policy_from_settings(setup) -> None:
    from muninn.plugins.search.sync_hook import refresh_keyword_index

    settings, pol = setup
    uri = "viking://resources/shared/x.md"
    refresh_keyword_index(settings, "viking://resources/shared", {uri: _fact("X", "INC-4242")}, [])
    assert settings.paths.search_index().exists()
    assert {n for n, p in pol.profiles.items() if _held(settings, p, uri)} == {"owner", "raven", "wren"}


def test_an_index_override_stays_the_configured_identitys_alone(tmp_path: Path) -> None:
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "ws"), "search": {"index": "mine.sqlite"},
                                   "openviking": {"account": "home", "user": "owner"}}))
    s = config.load(cfg)
    assert s.paths.search_index() == s.paths.search_index("home", "owner") == tmp_path / "mine.sqlite"
    assert s.paths.search_index("home", "raven") == tmp_path / "ws/search/home.raven.sqlite"


class _Server:
    """What build_from_openviking asks of a client: a listing with size and modTime, and reads."""

    def __init__(self, files: dict[str, str], modified: str | None = "2026-11-30T10:00:00Z") -> None:
        self.files = dict(files)
        self.stamps = {u: modified for u in files}
        self.reads = 0

    def walk(self, root: str, into=None):
        """As OpenViking.walk: a folder `into` refuses is not listed, so nothing below it is seen."""
        def entered(uri: str) -> bool:
            parts = uri[len(root) + 1:].split("/")[:-1]
            return into is None or all(into("/".join([root, *parts[:n]])) for n in range(1, len(parts) + 1))

        return [Entry(uri=u, is_dir=False, size=len(t), modified=self.stamps[u])
                for u, t in sorted(self.files.items()) if u.startswith(root + "/") and entered(u)]

    def read(self, uri: str) -> str:
        self.reads += 1
        return self.files[uri]


def test_a_walk_reads_only_files_whose_listing_changed(tmp_path: Path) -> None:
    db = tmp_path / "kw.sqlite"
    root = "viking://resources/shared"
    server = _Server({f"{root}/{i}.md": _fact(f"Fact {i}", f"word{i}") for i in range(20)})
    first = keyword.build_from_openviking(server, [root], db)
    assert (first.indexed, server.reads) == (20, 20)
    server.reads = 0
    again = keyword.build_from_openviking(server, [root], db)
    assert (again.indexed, again.unchanged, server.reads) == (0, 20, 0)
    server.files[f"{root}/3.md"] = _fact("Fact 3", "rewritten zorblax")
    server.stamps[f"{root}/3.md"] = "2026-11-30T11:00:00Z"
    del server.files[f"{root}/4.md"]
    server.reads = 0
    third = keyword.build_from_openviking(server, [root], db)
    assert (third.indexed, third.removed, server.reads) == (1, 1, 1)
    idx = keyword.KeywordIndex(db)
    assert [c.uri for c in idx.candidates("zorblax", root, 5)] == [f"{root}/3.md"]
    idx.close()


def test_a_listing_without_modtime_is_always_read(tmp_path: Path) -> None:
    root = "viking://resources/shared"
    server = _Server({f"{root}/a.md": _fact("A", "a")}, modified=None)
    keyword.build_from_openviking(server, [root], tmp_path / "kw.sqlite")
    keyword.build_from_openviking(server, [root], tmp_path / "kw.sqlite")
    assert server.reads == 2


def test_ten_thousand_unchanged_files_cost_only_the_listing(tmp_path: Path) -> None:
    db = tmp_path / "kw.sqlite"
    root = "viking://resources/shared"
    server = _Server({f"{root}/{i:05d}.md": _fact(f"Fact {i}", f"body {i}") for i in range(10_000)})
    keyword.build_from_openviking(server, [root], db)
    server.reads = 0
    t0 = time.perf_counter()
    stats = keyword.build_from_openviking(server, [root], db)
    took = time.perf_counter() - t0
    assert (stats.unchanged, server.reads) == (10_000, 0)
    assert took < 5, took


@pytest.mark.parametrize("reader", ["raven", "wren", "owner"])
def test_every_warning_names_the_fix_for_that_reader(setup, reader: str) -> None:
    settings, pol = setup
    profile = pol.profile(reader)
    fix = f"muninn search-index --profile {reader}"
    missing = reader_index.problem(settings, profile)
    assert missing and fix in missing and "no keyword index" in missing
    with pytest.raises(keyword.KeywordIndexError) as err:
        keyword.KeywordIndex(reader_index.index_path(settings, profile), fix=reader_index.fix_command(profile))
    assert fix in str(err.value)
    # Fed by sync but never walked: it may lack files written some other way.
    keyword.index_facts(reader_index.index_path(settings, profile), {"viking://resources/shared/a.md": _fact("A", "a")})
    unwalked = reader_index.problem(settings, profile)
    assert unwalked and fix in unwalked and "never walked" in unwalked
    server = _Server({"viking://resources/shared/a.md": _fact("A", "a")})
    reader_index.refresh(settings, profile, server)  # type: ignore[arg-type]
    assert reader_index.problem(settings, profile) is None
    old = reader_index.problem(settings, profile, max_age=dt.timedelta(seconds=-1))
    assert old and fix in old and "last walked" in old


def test_a_refresh_that_fails_becomes_a_warning_naming_the_readers_fix(setup) -> None:
    from muninn.core.errors import MuninnError

    settings, pol = setup

    class _Down:
        def walk(self, root: str, into=None):
            raise MuninnError("OpenViking at http://127.0.0.1:1 is not answering")

    warning = reader_index.refresh_quietly(settings, pol.profile("raven"), _Down())  # type: ignore[arg-type]
    assert warning and "muninn search-index --profile raven" in warning and "not answering" in warning


def _dated(title: str, date: str) -> str:
    return f"---\nsource: notes\ndate: {date}\n---\n# {title}\nbody\n"


@pytest.mark.parametrize("reader, expected", [
    ("raven", {"shared": (2, "2026-11-02"), "raven": (1, "2026-11-30T09:15")}),
    ("wren", {"shared": (2, "2026-11-02"), "wren": (0, None)}),
    ("owner", {"shared": (2, "2026-11-02"), "raven": (1, "2026-11-30T09:15"), "bob": (1, "2025-01-01")}),
])
def test_store_status_counts_each_readable_area_and_says_how_fresh_the_index_is(setup, reader, expected) -> None:
    settings, pol = setup
    files = {"viking://resources/shared/a.md": _dated("A", "2026-10-01"),
             "viking://resources/shared/b.md": _dated("B", "2026-11-02"),
             "viking://resources/agents/raven/o.md": _dated("O", "2026-11-30T09:15:00+00:00"),
             "viking://resources/agents/bob/d.md": _dated("D", "2025-01-01")}
    reader_index.after_write(settings, files, [], pol, own=False)
    profile = pol.profile(reader)
    rows = reader_index.store_status(settings, profile, pol.areas)
    got = {r["area"]: (r["files"], (r["newest"] or None) and str(r["newest"])[:len(expected[r["area"]][1] or "")])
           for r in rows}
    assert got == {a: (n, d) for a, (n, d) in expected.items()}
    assert all(f"muninn search-index --profile {reader}" in str(r["index"]) for r in rows)   # never walked
    reader_index.refresh(settings, profile, _Server({}))  # type: ignore[arg-type]
    assert all(str(r["index"]).startswith("walked ") for r in reader_index.store_status(settings, profile, pol.areas))


def test_a_reader_narrowed_then_widened_gets_its_rows_back(setup) -> None:
    """Issue 47 §7: the walk's stamps leave with the rows, so widening the policy again reads the files
    back instead of passing them over as unchanged."""
    settings, pol = setup
    shared = "viking://resources/shared"
    server = _Server({f"{shared}/{i}.md": _fact(f"Runbook {i}", f"restart step zorb{i}") for i in range(3)})
    raven = pol.profile("raven")
    reader_index.refresh(settings, raven, server)  # type: ignore[arg-type]
    assert all(_held(settings, raven, u) for u in server.files)
    narrowed = {**READERS, "raven": {**READERS["raven"], "areas": {"raven": "write"}}}
    (settings.paths.home.parent / "policy.yaml").write_text(yaml.safe_dump(
        {"version": 1, "areas": AREAS, "readers": narrowed}))
    narrow = policy_mod.load(settings.paths.home.parent / "policy.yaml").profile("raven")
    reader_index.refresh(settings, narrow, server)  # type: ignore[arg-type]
    assert not any(_held(settings, raven, u) for u in server.files)
    server.reads = 0
    again = reader_index.refresh(settings, raven, server)  # type: ignore[arg-type]
    assert again.indexed == 3 and server.reads == 3
    assert all(_held(settings, raven, u) for u in server.files)


def test_forget_puts_the_purged_text_in_every_index_that_held_the_old_one(setup) -> None:
    settings, pol = setup
    uri = "viking://resources/shared/leak.md"
    reader_index.after_write(settings, {uri: _fact("Leak", "the token is Zq8-old-value-77")}, [], pol)
    reader_index.forget(settings, {uri: _fact("Leak", "the token is [REDACTED:old]")}, [], pol)
    for name in ("owner", "raven", "wren"):
        idx = keyword.KeywordIndex(reader_index.index_path(settings, pol.profile(name)))
        try:
            assert "Zq8-old-value-77" not in (idx.text(uri) or "") and "[REDACTED:old]" in idx.text(uri)
        finally:
            idx.close()
        raw = reader_index.index_path(settings, pol.profile(name)).read_bytes()
        assert b"Zq8-old-value-77" not in raw, name          # not in the file's free pages either
    gone = "viking://resources/shared/gone.md"
    reader_index.after_write(settings, {gone: _fact("Gone", "x")}, [], pol)
    reader_index.forget(settings, {}, [gone], pol)
    assert not any(_held(settings, pol.profile(n), gone) for n in ("owner", "raven", "wren"))
