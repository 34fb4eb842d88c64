"""Unit section (search.ranking.unit: section, issue 48): a hit is a section, found by its best passage.
The section key, the parts read from the reader's own index, the ranking steps, and where passages live:
in the reader's vector cache, from which every purge of its index takes them out."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
import yaml

from muninn.core import config, factfile
from muninn.core import policy as policy_mod
from muninn.core.config import RerankSettings
from muninn.core.ranking_profile import Ranking
from muninn.plugins.search import dense, fact_vectors, keyword, ranking, reader_index, windows
from muninn.plugins.search.pipeline import Searcher
from muninn.plugins.search.types import Candidate

R = "viking://resources"
ROOT = f"{R}/manual"
FILLER = ("This chapter describes the general layout of the configuration and the conventions that the "
          "rest of the manual follows when it names files, options and commands. ")
ANSWER = ("A file that is deleted while a process keeps it open still takes disk space, which is why df "
          "reports the volume nearly full while du adds up far less.")
QUESTION = "why does df say the disk is full when du counts much less"


def _fact(name: str, heading: str, paragraphs: list[str], part: str = "") -> str:
    crumb = f"{heading} (part {part})" if part else heading
    return factfile.render(factfile.FactFile(
        id=f"manual/{name}.md#{name}", source="notes", kind="note", title=heading, body="\n\n".join(paragraphs),
        breadcrumb=("Manual", crumb), source_path=f"manual/{name}.md")).text


# "Disk Space" is one section cut in two parts; the answer is buried in part 2.
FILES = {
    f"{ROOT}/disk/part-1.md": _fact("disk", "Disk Space", [FILLER * 3, FILLER * 3], "1/2"),
    f"{ROOT}/disk/part-2.md": _fact("disk", "Disk Space", [FILLER * 3, FILLER * 2, ANSWER], "2/2"),
    f"{ROOT}/disk-quota.md": _fact("disk-quota", "Disk Quota", ["Quotas limit the disk space of a user."]),
    f"{ROOT}/users.md": _fact("users", "User Accounts", [FILLER * 2, "Accounts are created with adduser."]),
    f"{ROOT}/net.md": _fact("net", "Network", ["Interfaces are configured in /etc/network/interfaces."]),
}


@pytest.mark.parametrize("uri, key", [
    (f"{ROOT}/disk/part-2.md", f"{ROOT}/disk.md"),
    (f"{ROOT}/disk/part-12.md", f"{ROOT}/disk.md"),
    (f"{ROOT}/disk.md", f"{ROOT}/disk.md"),
    (f"{ROOT}/part-1/notes.md", f"{ROOT}/part-1/notes.md"),
])
def test_every_part_of_a_section_shares_its_key(uri: str, key: str) -> None:
    assert windows.section_key(uri) == key


def test_the_index_lists_a_sections_parts_and_nothing_that_only_shares_its_prefix(tmp_path: Path) -> None:
    db = tmp_path / "index.sqlite"
    more = {f"{ROOT}/disk/part-10.md": FILES[f"{ROOT}/disk/part-1.md"],
            f"{ROOT}/disk/partition.md": FILES[f"{ROOT}/net.md"],
            f"{ROOT}/disk/other/part-1.md": FILES[f"{ROOT}/net.md"]}
    keyword.index_facts(db, {**FILES, **more})
    index = keyword.KeywordIndex(db)
    try:
        assert index.parts(f"{ROOT}/disk.md") == [f"{ROOT}/disk/part-1.md", f"{ROOT}/disk/part-10.md",
                                                  f"{ROOT}/disk/part-2.md"]
        assert index.parts(f"{ROOT}/net.md") == []
    finally:
        index.close()


def test_each_section_keeps_one_place_shown_as_the_part_of_its_best_passage() -> None:
    best = ranking.best_passages([("s", "s/part-1.md", "a", 0.2), ("s", "s/part-2.md", "b", 0.7),
                                  ("t", "t.md", "c", 0.5), ("s", "s/part-1.md", "d", 0.7)])
    assert best == {"s": ("s/part-2.md", "b", 0.7), "t": ("t.md", "c", 0.5)}
    cands = [Candidate(uri="s/part-1.md", score=3.0, stage_scores={"linear": 3.0}), Candidate(uri="t.md", score=2.0),
             Candidate(uri="s/part-2.md", score=1.0)]
    keys = {"s/part-1.md": "s", "s/part-2.md": "s", "t.md": "t"}
    out, moved = ranking.one_per_section(cands, keys, best)
    assert [c.uri for c in out] == ["s/part-2.md", "t.md"] and out[0].score == 3.0
    assert moved == {"s/part-2.md": "s/part-1.md"} and out[0].stage_scores == {"linear": 3.0}


def test_the_unit_is_facts_unless_the_profile_says_sections() -> None:
    assert Ranking().unit == "fact" and Ranking().embedded_window_chars == 0
    assert Ranking(window_weight=1.0).embedded_window_chars == Ranking().window_chars
    assert Ranking(unit="section").embedded_window_chars == Ranking().passage_chars


# --- where passages live: the reader's vector cache, purged with its index ---

AREAS = {"shared": f"{R}/shared", "private": f"{R}/shared/private"}
READERS = {
    "owner": {"kind": "owner", "account": "home", "user": "owner", "remember_to": "shared",
              "areas": {"shared": "manage", "private": "manage"}},
    "raven": {"kind": "agent", "account": "home", "user": "raven", "areas": {"shared": "read"}},
}
LONG = [FILLER * 3, FILLER * 3, "The {w} answer sits here, past the first window."]
KEEP = {f"{R}/shared/runbook/part-1.md": "kestrelbay", f"{R}/shared/runbook/part-2.md": "wombatgate"}
LEAK = {f"{R}/shared/private/salary/part-1.md": "quokkavault", f"{R}/shared/private/salary/part-2.md": "marmotline"}


def _long(word: str) -> str:
    return _fact(word, f"{word} title", [p.format(w=word) for p in LONG])


def _settings(tmp_path: Path) -> config.Settings:
    pol = tmp_path / "policy.yaml"
    pol.write_text(yaml.safe_dump({"version": 1, "areas": AREAS, "readers": READERS}))
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "ws"), "guard": {"policy": str(pol)},
                                   "openviking": {"account": "home", "user": "owner"},
                                   "search": {"ranking": {"unit": "section"}}}))
    return config.load(cfg)


def _passages(files: dict[str, str], chars: int) -> list[str]:
    return [t for text in files.values() for t in windows.texts(text, chars)]


def _cached(settings: config.Settings, path: Path, texts: list[str]) -> None:
    scorer = dense.DenseScorer(settings.embed, dense.cache_path(path))
    try:
        scorer._store([(scorer._key(t[:dense.MAX_CHARS]), np.ones(8, dtype=np.float32).tobytes()) for t in texts])
    finally:
        scorer.close()


def _keys(settings: config.Settings, path: Path | None = None, texts: list[str] = ()) -> set[str]:
    if path is not None:
        conn = sqlite3.connect(dense.cache_path(path))
        try:
            return {k for (k,) in conn.execute("SELECT key FROM vectors")}
        finally:
            conn.close()
    scorer = dense.DenseScorer(settings.embed)
    try:
        return {scorer._key(t[:dense.MAX_CHARS]) for t in texts}
    finally:
        scorer.close()


def _leaky(settings: config.Settings) -> tuple[policy_mod.Profile, Path, int]:
    """Raven's index and vector cache holding the passages of what it may read and of what it may not."""
    raven = policy_mod.load(settings.paths.policy).profile("raven")
    path = reader_index.index_path(settings, raven)
    files = {u: _long(w) for u, w in {**KEEP, **LEAK}.items()}
    keyword.index_facts(path, files)
    chars = settings.ranking.passage_chars
    index = keyword.KeywordIndex(path)
    try:
        embedded = fact_vectors.texts(index, fact_vectors.window_chars(settings))
    finally:
        index.close()
    assert set(_passages(files, chars)) <= set(embedded)     # the nightly fill embeds the passages too
    _cached(settings, path, embedded)
    return raven, path, chars


def test_a_purged_files_passages_leave_the_vector_cache(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    raven, path, chars = _leaky(settings)
    kept = _keys(settings, texts=_passages({u: _long(w) for u, w in KEEP.items()}, chars))
    leaked = _keys(settings, texts=_passages({u: _long(w) for u, w in LEAK.items()}, chars))
    assert leaked <= _keys(settings, path)
    reader_index.purge(settings, raven)       # what `policy apply` and the nested-area purge run
    held = _keys(settings, path)
    assert kept <= held and not leaked & held
    for word in LEAK.values():
        assert word.encode() not in path.read_bytes()


def test_a_forgotten_or_rewritten_files_passages_leave_the_vector_cache(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    pol = policy_mod.load(settings.paths.policy)
    raven, path, chars = _leaky(settings)
    rewritten, removed = f"{R}/shared/runbook/part-2.md", f"{R}/shared/runbook/part-1.md"
    old = _keys(settings, texts=_passages({u: _long(w) for u, w in KEEP.items()}, chars))
    reader_index.forget(settings, {rewritten: _long("redacted")}, [removed], pol)   # what `leak purge` runs
    assert not old & _keys(settings, path)


def test_a_narrowed_policy_takes_the_passages_of_what_the_reader_lost(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    raven, path, chars = _leaky(settings)
    narrowed = {**READERS, "raven": {**READERS["raven"], "areas": {}}}
    settings.paths.policy.write_text(yaml.safe_dump({"version": 1, "areas": AREAS, "readers": narrowed}))
    reader_index.purge(settings, policy_mod.load(settings.paths.policy).profile("raven"))
    every = _keys(settings, texts=_passages({u: _long(w) for u, w in {**KEEP, **LEAK}.items()}, chars))
    assert not every & _keys(settings, path)


# --- through the real parts: the test stack's sidecar, a real openviking-server, the Searcher ---

@pytest.fixture(scope="module")
def manual(stack, tmp_path_factory):
    _, client = stack.new_account("sections")
    client.ensure_dir(ROOT)
    client.batch_write(ROOT, FILES, wait=True)
    client.wait()
    db = tmp_path_factory.mktemp("sections") / "index.sqlite"
    keyword.index_facts(db, FILES)
    yield client, db
    client.close()


def _stack_settings(stack, **ranked):
    s = stack.settings
    return s.model_copy(update={"search": s.search.model_copy(
        update={"recency": False, "rerank": RerankSettings(enabled=False),
                "ranking": {**s.search.ranking, **ranked}})})


@pytest.mark.integration
def test_a_section_takes_one_place_with_its_best_passage_as_snippet(stack, manual) -> None:
    client, db = manual
    with Searcher(_stack_settings(stack, unit="section"), client=client, index=db) as s:
        res = s.search(QUESTION, k=4, target=ROOT)
        fact = Searcher(_stack_settings(stack), client=client, index=db)
        try:
            before = fact.search(QUESTION, k=4, target=ROOT)
        finally:
            fact.close()
    assert res.warnings == [], res.warnings
    keys = [windows.section_key(h.uri) for h in res.hits]
    assert len(keys) == len(set(keys))                       # parts never take two places
    assert res.hits[0].uri == f"{ROOT}/disk/part-2.md" and ANSWER in res.hits[0].snippet
    assert "passage_cos" in res.hits[0].stage_scores
    assert all("passage_cos" not in h.stage_scores for h in before.hits)    # the old path, as it was


@pytest.mark.integration
def test_a_part_the_reader_may_not_read_is_never_a_passage(stack, manual) -> None:
    client, db = manual
    hidden = f"{ROOT}/disk/part-2.md"
    with Searcher(_stack_settings(stack, unit="section"), client=client, index=db,
                  readable=lambda u: u != hidden) as s:
        res = s.search(QUESTION, k=4, target=ROOT)
    assert res.hits and all(h.uri != hidden and ANSWER not in h.snippet for h in res.hits)
