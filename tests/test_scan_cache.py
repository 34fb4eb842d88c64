"""The server leak scan reads only what changed since it was found clean: same stamp (size, modTime),
same known values, retired hashes and rules. A new known value, a retired one, a changed file, a week
gone by, a lost or damaged cache, or `--full` make it read again; a file with findings is read every
night. The cache never holds a value."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
import yaml

from muninn.core import config
from muninn.core.client import Entry
from muninn.nightly import scan_cache, server_scan

OLD = "zq8vn3ktp2lm7rx4wc9b"      # known from the start (lower case: no undeclared-secret shape)
NEW = "hy5dj2qs8vn4kp7tm3xa"      # added to the secrets file later
ROOT = "viking://resources"


class FakeServer:
    """One identity's view: {uri: (text, modTime)}; counts reads."""

    def __init__(self, files: dict[str, tuple[str, str | None]]) -> None:
        self.files = files
        self.reads: list[str] = []

    def ls(self, folder: str) -> list[Entry]:
        return [Entry(uri, False, len(text), mod) for uri, (text, mod) in sorted(self.files.items())
                if uri.rsplit("/", 1)[0] == folder]

    def read(self, uri: str) -> str:
        self.reads.append(uri)
        return self.files[uri][0]

    def __enter__(self) -> FakeServer:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    secrets = tmp_path / "secrets.yaml"
    secrets.write_text(yaml.safe_dump([{"id": "old", "service": "x", "value": OLD}]))
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "home"), "vault": {"files": [str(secrets)]}}))
    server = FakeServer({f"{ROOT}/f{i}.md": (f"plain note number {i}\n", "2026-11-01T00:00:00Z") for i in range(6)})
    server.files[f"{ROOT}/later.md"] = (f"will hold {NEW} once it is known\n", "2026-11-01T00:00:00Z")
    ident = server_scan.Identity("cli", "home", "home:owner", (ROOT,))
    monkeypatch.setattr(server_scan, "identities", lambda s: [ident])
    monkeypatch.setattr(server_scan, "connect", lambda s, i: server)

    class World:
        settings = config.load(cfg)

        def scan(self, **kw) -> server_scan.ScanReport:
            server.reads.clear()
            return server_scan.scan(config.load(cfg), **kw)

        def add_known(self, value: str, sid: str) -> None:
            data = [*yaml.safe_load(secrets.read_text()), {"id": sid, "service": "x", "value": value}]
            secrets.write_text(yaml.safe_dump(data))

        def retire_old(self) -> None:
            secrets.write_text(yaml.safe_dump([{"id": "other", "service": "x", "value": "Pm4Rt8Wq2Zx6Nc3Vb7Ls"}]))

    w = World()
    w.server = server
    return w


def test_an_unchanged_tree_is_not_read_twice(world) -> None:
    first = world.scan()
    assert first.full and len(world.server.reads) == 7 and not first.found
    second = world.scan()
    assert not second.full and world.server.reads == [] and second.files == 7 and second.unchanged == 7


@pytest.mark.parametrize("change", ["content and modTime", "same size, new modTime", "new file"])
def test_only_a_changed_file_is_read(world, change: str) -> None:
    world.scan()
    uri = f"{ROOT}/f2.md" if change != "new file" else f"{ROOT}/f9.md"
    text = {"content and modTime": f"now it says {OLD}\n", "same size, new modTime": "plain note number X\n",
            "new file": f"fresh {OLD}\n"}[change]
    world.server.files[uri] = (text, "2026-11-02T00:00:00Z")
    report = world.scan()
    assert world.server.reads == [uri]
    assert [f.uri for f in report.found] == ([] if change == "same size, new modTime" else [uri])


def test_a_newly_known_value_forces_a_full_rescan_and_is_found(world) -> None:
    world.scan()
    world.scan()
    assert world.server.reads == []
    world.add_known(NEW, "new")
    report = world.scan()
    assert report.full and len(world.server.reads) == 7          # every file, not only changed ones
    assert [(f.uri, f.findings[0]["secret_id"]) for f in report.found] == [(f"{ROOT}/later.md", "new")]


def test_a_retired_value_forces_a_full_rescan(world) -> None:
    world.scan()
    world.retire_old()
    report = world.scan()
    assert report.full and len(world.server.reads) == 7


def test_an_edited_allowlist_forces_a_full_rescan(world) -> None:
    world.scan()
    world.settings.paths.redact_allowlist.parent.mkdir(parents=True, exist_ok=True)
    world.settings.paths.redact_allowlist.write_text(json.dumps({"salt": "ab" * 32, "allowed": []}))
    report = world.scan()
    assert report.full and len(world.server.reads) == 7


def test_a_file_with_findings_is_read_every_night(world) -> None:
    world.server.files[f"{ROOT}/f3.md"] = (f"leaked {OLD}\n", "2026-11-01T00:00:00Z")
    for _ in range(3):
        report = world.scan()
        assert f"{ROOT}/f3.md" in world.server.reads and [f.uri for f in report.found] == [f"{ROOT}/f3.md"]


def test_a_listing_without_modtime_is_always_read(world) -> None:
    for uri in world.server.files:
        world.server.files[uri] = (world.server.files[uri][0], None)
    world.scan()
    world.scan()
    assert len(world.server.reads) == 7


@pytest.mark.parametrize("damage", ["missing", "not json", "a list", "other fingerprint", "a week old"])
def test_a_lost_stale_or_damaged_cache_means_a_full_scan(world, damage: str) -> None:
    world.scan()
    path = server_scan.cache_path(world.settings)
    data = json.loads(path.read_text())
    if damage == "missing":
        path.unlink()
    elif damage == "not json":
        path.write_text("{half")
    elif damage == "a list":
        path.write_text("[]")
    elif damage == "other fingerprint":
        path.write_text(json.dumps(data | {"fingerprint": "0" * 64}))
    else:
        old = dt.datetime.fromisoformat(data["full_at"]) - scan_cache.FULL_EVERY - dt.timedelta(minutes=1)
        path.write_text(json.dumps(data | {"full_at": old.isoformat()}))
    report = world.scan()
    assert report.full and len(world.server.reads) == 7
    world.scan()
    assert world.server.reads == []          # and the cache is good again


def test_full_reads_everything_and_leaves_the_cache_as_it_was(world) -> None:
    world.scan()
    before = server_scan.cache_path(world.settings).read_text()
    report = world.scan(full=True)
    assert report.full and len(world.server.reads) == 7
    assert server_scan.cache_path(world.settings).read_text() == before


def test_a_vanished_file_leaves_the_cache(world) -> None:
    world.scan()
    del world.server.files[f"{ROOT}/f1.md"]
    world.scan()
    world.server.files[f"{ROOT}/f1.md"] = ("plain note number 1\n", "2026-11-01T00:00:00Z")
    world.scan()
    assert world.server.reads == [f"{ROOT}/f1.md"]


def test_the_cache_holds_no_value(world) -> None:
    world.add_known(NEW, "new")
    world.scan()
    text = server_scan.cache_path(world.settings).read_text()
    assert OLD not in text and NEW not in text
    assert oct(server_scan.cache_path(world.settings).stat().st_mode & 0o777) == "0o600"


def test_every_rule_file_pattern_names_a_file() -> None:
    """The fingerprint reads the guards' code by path: a pattern that matches nothing (a module moved to
    another room) would let a change in what a finding is keep the old cache."""
    assert all(sorted(scan_cache._GUARDS.glob(p)) for p in scan_cache._RULE_FILES), [
        p for p in scan_cache._RULE_FILES if not sorted(scan_cache._GUARDS.glob(p))]
