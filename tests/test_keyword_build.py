"""The keyword index build reads front matter with libyaml (the pure-Python loader was 93 % of a build):
the same metadata for every kind of front matter, and the same index and ranking on a fixed corpus as
the pure-Python loader gave."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pytest
import yaml
from test_factfile import AWKWARD

from muninn.core import factfile
from muninn.core.factfile import FactFile, render
from muninn.plugins.search import keyword, query

pytestmark = pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML built without libyaml")

# Front matter as other writers leave it, by class: typed scalars, collections, YAML features, broken.
HAND_WRITTEN = {
    "date unquoted": "date: 2025-03-04\nid: a",
    "datetime unquoted": "date: 2025-03-04 09:30:00\nid: a",
    "datetime with offset": "date: 2025-03-04T09:30:00+02:00",
    "datetime Z": "date: 2025-03-04T09:30:00Z",
    "int and float": "n: 12\nf: 1.5\nx: 0x1F\noct: 0o17\nsexa: 1:30",
    "booleans yaml 1.1": "a: yes\nb: off\nc: True\nd: ~\ne: null",
    "block list": "tags:\n  - a\n  - b",
    "flow list": "tags: [a, 'b c', \"d\"]",
    "nested mapping": "meta:\n  who: x\n  when: 2025-01-02",
    "block scalar": "body: |\n  line one\n  line two\nfolded: >\n  a\n  b",
    "anchors": "a: &x hello\nb: *x",
    "merge key": "base: &b {k: 1}\nother:\n  <<: *b\n  j: 2",
    "comment": "id: a # trailing\n# whole line\nsource: notes",
    "quoted escapes": "a: \"tab\\there \\u00e9 \\x41\"\nb: 'it''s'",
    "unicode": "title: 日本語 › émoji 😀",
    "empty value": "a:\nb: ''",
    "duplicate key": "a: 1\na: 2",
    "binary": "b: !!binary aGVsbG8=",
    "timestamp spaced": "t: 2001-12-14 21:59:43.10 -5",
    "scalar document": "just a string",
    "list document": "- a\n- b",
    "empty document": "",
    "comment only": "# nothing",
    "bad indent": "a: b\n  c: d",
    "unclosed quote": "a: \"open",
    "tab indent": "a:\n\tb: c",
    "python tag": "a: !!python/object:os.system x",
    "unknown tag": "a: !custom x",
    "control char": "a: b\x07c",
    "nel": "a: b\x85c",
    "bom inside": "a: \ufeffb",
    "two documents": "a: 1\n---\nb: 2",
    "directive": "%YAML 1.1\n---\na: 1",
    "long key": "? complex key\n: value",
}


def _both(text: str) -> tuple[object, object]:
    fast = factfile.split_front_matter(text)
    slow_loader, factfile._LOADER = factfile._LOADER, yaml.SafeLoader
    try:
        slow = factfile.split_front_matter(text)
    finally:
        factfile._LOADER = slow_loader
    return fast, slow


@pytest.mark.parametrize("name", list(HAND_WRITTEN))
def test_hand_written_front_matter_reads_the_same(name: str) -> None:
    text = f"---\n{HAND_WRITTEN[name]}\n---\nbody\n"
    fast, slow = _both(text)
    assert fast == slow


@pytest.mark.parametrize("value", AWKWARD)
def test_rendered_front_matter_reads_the_same(value: str) -> None:
    ff = FactFile(id=f"notes/{value}", source="notes", kind="section", title=value, body="b", project=value or None,
                  date="2025-05-14T09:30:00Z", tags=(value, "x"), breadcrumb=("Doc", value), source_path=value,
                  extra={"written_by": value})
    fast, slow = _both(render(ff).text)
    assert fast == slow
    assert fast[0]["project"] == (value or None)      # the value itself, not a {} fallback


def test_the_fast_loader_is_the_one_in_use() -> None:
    assert factfile._LOADER is yaml.CSafeLoader


def _corpus(n: int = 400) -> list[tuple[str, str]]:
    """Rendered facts over a small vocabulary (many ties and shared terms), plus hand-written files."""
    rng = random.Random(7)
    words = ("backup restore postgres nginx certificate kubernetes drain dns vpn redis grafana alert terraform "
             "disk rotate deploy rollback incident latency replica kernel firewall zfs snapshot cron").split()
    files = []
    for i in range(n):
        title = " ".join(rng.sample(words, 3))
        body = " ".join(rng.choice(words) for _ in range(rng.randint(5, 60)))
        day = dt.date(2025, 1, 1) + dt.timedelta(days=rng.randrange(365))
        ff = FactFile(id=f"tasks/{i}", source="tasks", kind="task", title=title, body=body,
                      lead=f"Task {title}", context=" ".join(rng.sample(words, 4)) if i % 3 == 0 else "",
                      project=f"project-{i % 7}", date=day.isoformat(), tags=(rng.choice(words),),
                      breadcrumb=(f"project-{i % 7}", title), source_path=f"tasks/{i}")
        files.append((f"viking://resources/tasks/{i:04d}.md", render(ff).text))
    for i, name in enumerate(HAND_WRITTEN):
        files.append((f"viking://resources/notes/hand-{i:02d}.md",
                      f"---\n{HAND_WRITTEN[name]}\n---\n# {name}\n\n{' '.join(rng.sample(words, 8))}\n"))
    return files


def _build(path: Path, loader: type, hash_size: int | None) -> keyword.IndexStats:
    saved = factfile._LOADER, keyword.HASH_SIZE
    factfile._LOADER, keyword.HASH_SIZE = loader, hash_size
    try:
        return keyword.index_facts(path, _corpus())
    finally:
        factfile._LOADER, keyword.HASH_SIZE = saved


@pytest.mark.parametrize("hash_size", [keyword.HASH_SIZE, 1024])   # today's, and a tiny one: many segments
def test_the_index_and_its_rankings_are_those_of_the_old_build(tmp_path: Path, hash_size: int) -> None:
    """Old: the pure-Python loader and FTS5's default term buffer. New: libyaml and `hash_size`."""
    old, new = tmp_path / "old.sqlite", tmp_path / "new.sqlite"
    assert _build(old, yaml.SafeLoader, None) == _build(new, yaml.CSafeLoader, hash_size)
    rows = "SELECT uri, content_hash, date, source, text FROM docs ORDER BY uri"
    a, b = keyword.connect(old), keyword.connect(new)
    try:
        assert a.execute(rows).fetchall() == b.execute(rows).fetchall()
        assert b.execute("SELECT v FROM fts_config WHERE k = 'hashsize'").fetchone() == (hash_size,)
        if hash_size < 1 << 20:     # the tiny buffer really wrote the index as other segments
            segments = "SELECT count(*) FROM fts_data"
            assert a.execute(segments).fetchone()[0] < b.execute(segments).fetchone()[0]
    finally:
        a.close(), b.close()
    rng = random.Random(3)
    words = "backup postgres nginx dns vpn redis alert disk deploy incident kernel zfs cron hand".split()
    queries = [" ".join(rng.sample(words, k)) for k in (1, 2, 3) for _ in range(10)]
    window = (dt.datetime(2025, 3, 1, tzinfo=dt.UTC), dt.datetime(2025, 6, 1, tzinfo=dt.UTC))
    old_idx, new_idx = keyword.KeywordIndex(old), keyword.KeywordIndex(new)
    try:
        compared = 0
        for q in queries:
            match = query.fts_query(query.analyse(q))
            for target in ("viking://resources", "viking://resources/tasks"):
                for between in (None, window):
                    got = new_idx.candidates(match, target, 20, between)
                    assert got == old_idx.candidates(match, target, 20, between)
                    compared += bool(got)
        assert compared > len(queries)      # the comparison saw real rankings, not empty lists
    finally:
        old_idx.close(), new_idx.close()
