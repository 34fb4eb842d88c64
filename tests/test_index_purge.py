"""Purging a reader's index of what its policy does not let it read: the keyword rows, the vectors of
their texts, and every trace in the files; the format-4 upgrade step does it on the first command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from test_reader_index import _Server

from muninn.core import config
from muninn.core import policy as policy_mod
from muninn.plugins.search import dense, fact_vectors, keyword, reader_index
from muninn.plugins.search import doc as docmod

R = "viking://resources"
AREAS = {"shared": f"{R}/shared", "private": f"{R}/shared/private", "open": f"{R}/shared/private/open",
         "raven": f"{R}/agents/raven"}
READERS = {
    "owner": {"kind": "owner", "account": "home", "user": "owner", "remember_to": "shared",
              "areas": {"shared": "manage", "private": "manage", "open": "manage", "raven": "manage"}},
    "raven": {"kind": "agent", "account": "home", "user": "raven",
              "areas": {"shared": "read", "open": "read", "raven": "write"}},
}
KEEP = {f"{R}/shared/runbook.md": "kestrelbay", f"{R}/shared/private/open/handbook.md": "wombatgate",
        f"{R}/agents/raven/obs.md": "emberfall"}
LEAK = {f"{R}/shared/private/salary.md": "quokkavault", f"{R}/shared/private/deeper/plan.md": "marmotline",
        f"{R}/elsewhere/notes.md": "otterpine"}


def _fact(word: str) -> str:
    return f"---\nsource: notes\ndate: 2026-11-30\n---\n# {word} title\nThe {word} body says {word}.\n"


def _write(tmp_path: Path, policy_text: str | None = None) -> tuple[config.Settings, Path]:
    pol = tmp_path / "policy.yaml"
    pol.write_text(policy_text if policy_text is not None else yaml.safe_dump(
        {"version": 1, "areas": AREAS, "readers": READERS}))
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "ws"), "guard": {"policy": str(pol)},
                                   "openviking": {"account": "home", "user": "owner"}}))
    return config.load(cfg), cfg


def _texts(uri: str, text: str) -> list[str]:
    d = docmod.parse(uri, text)
    return [d.text, d.fact or d.body]


def _leaky(settings: config.Settings, profile: policy_mod.Profile) -> Path:
    """The reader's index as the old sync left it: what it may read, and what it may not, each with vectors."""
    path = reader_index.index_path(settings, profile)
    files = {u: _fact(w) for u, w in {**KEEP, **LEAK}.items()}
    keyword.index_facts(path, files)
    scorer = dense.DenseScorer(settings.embed, dense.cache_path(path))
    rows = [(scorer._key(t[:dense.MAX_CHARS]), np.ones(8, dtype=np.float32).tobytes())
            for u, text in files.items() for t in _texts(u, text)]
    rows.append((scorer._key("a question raven asked", "query"), np.ones(8, dtype=np.float32).tobytes()))
    scorer._store(rows)
    scorer.close()
    return path


def _vector_keys(path: Path) -> set[str]:
    import sqlite3

    conn = sqlite3.connect(dense.cache_path(path))
    try:
        return {k for (k,) in conn.execute("SELECT key FROM vectors")}
    finally:
        conn.close()


def _keys_of(settings: config.Settings, files: dict[str, str]) -> set[str]:
    scorer = dense.DenseScorer(settings.embed)
    try:
        return {scorer._key(t[:dense.MAX_CHARS]) for u, w in files.items() for t in _texts(u, _fact(w))}
    finally:
        scorer.close()


def test_purge_takes_out_the_denied_files_their_vectors_and_every_trace(tmp_path: Path) -> None:
    settings, _ = _write(tmp_path)
    pol = policy_mod.load(settings.paths.policy)
    raven = pol.profile("raven")
    path = _leaky(settings, raven)
    assert sorted(reader_index.denied(settings, raven)) == sorted(LEAK)
    done = reader_index.purge(settings, raven)
    assert (done.files, set(keyword.uris(path))) == (len(LEAK), set(KEEP))
    keys = _vector_keys(path)
    assert keys == _keys_of(settings, KEEP)            # the query vector went too: it is only a cache
    assert done.vectors == 2 * len(LEAK) + 1
    for word in LEAK.values():
        assert word.encode() not in path.read_bytes()
    assert reader_index.denied(settings, raven) == [] and reader_index.purge(settings, raven).files == 0
    index = keyword.KeywordIndex(path)
    try:
        assert index.candidates("quokkavault", R, 5) == [] and index.candidates("kestrelbay", R, 5)
        assert len(fact_vectors.texts(index)) == 2 * len(KEEP)
    finally:
        index.close()


def test_the_configured_identitys_own_index_keeps_what_it_synced_outside_every_area(tmp_path: Path) -> None:
    settings, _ = _write(tmp_path)
    pol = policy_mod.load(settings.paths.policy)
    owner = pol.profile("owner")
    assert reader_index.is_own(settings, owner)
    path = reader_index.index_path(settings, owner)
    keyword.index_facts(path, {f"{R}/elsewhere/notes.md": _fact("otterpine"),
                               f"{R}/shared/private/open/h.md": _fact("x")})
    assert reader_index.denied(settings, owner) == []
    # ... but a file in an area with an ACL that gives it nothing (raven's `open`) is not kept there.
    restricted = {**READERS["owner"], "areas": {"shared": "manage", "raven": "manage"}}
    _write(tmp_path, yaml.safe_dump({"version": 1, "areas": AREAS, "readers": {**READERS, "owner": restricted}}))
    owner = policy_mod.load(settings.paths.policy).profile("owner")
    assert reader_index.denied(settings, owner) == [f"{R}/shared/private/open/h.md"]


def test_a_refresh_purges_then_walks_past_what_the_reader_may_not_read(tmp_path: Path) -> None:
    settings, _ = _write(tmp_path)
    raven = policy_mod.load(settings.paths.policy).profile("raven")
    path = _leaky(settings, raven)
    on_server = {u: _fact(w) for u, w in {**KEEP, **LEAK}.items()}
    stats = reader_index.refresh(settings, raven, _Server(on_server))  # type: ignore[arg-type]
    assert set(keyword.uris(path)) == set(KEEP) and stats.removed >= 2
    for word in LEAK.values():
        assert word.encode() not in path.read_bytes()


def _cli(cfg: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MUNINN_CONFIG": str(cfg)}
    return subprocess.run([sys.executable, "-m", "muninn", *args], capture_output=True, text=True, env=env,
                          timeout=120, cwd=tmp_path)


def _format_3(settings: config.Settings) -> None:
    settings.home.mkdir(parents=True, exist_ok=True)
    (settings.home / "format.json").write_text(json.dumps({"format": 3}))


def test_the_upgrade_purges_every_readers_index_on_the_first_command(tmp_path: Path) -> None:
    settings, cfg = _write(tmp_path)
    _format_3(settings)
    settings = config.load(cfg)     # a format-3 workspace embeds with the model it was made with
    pol = policy_mod.load(settings.paths.policy)
    raven = _leaky(settings, pol.profile("raven"))
    first = _cli(cfg, tmp_path, "policy", "show", "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads((settings.home / "format.json").read_text())["format"] >= 4
    assert set(keyword.uris(raven)) == set(KEEP)
    assert _vector_keys(raven) == _keys_of(settings, KEEP)
    notice = [line for line in first.stderr.splitlines() if "workspace upgrade" in line and "'raven'" in line]
    assert len(notice) == 1 and f"{len(LEAK)} file(s)" in notice[0], first.stderr
    again = _cli(cfg, tmp_path, "policy", "show", "--json")
    assert again.returncode == 0 and "workspace upgrade" not in again.stderr


@pytest.mark.parametrize("broken", ["areas: [not, a, mapping", "version: 1\nareas: {}\nreaders: {x: {kind: robot}}\n"])
def test_an_upgrade_with_a_policy_that_does_not_load_removes_the_reader_indexes(tmp_path: Path, broken: str) -> None:
    settings, cfg = _write(tmp_path)
    pol = policy_mod.load(settings.paths.policy)
    raven = _leaky(settings, pol.profile("raven"))
    own = reader_index.index_path(settings, pol.profile("owner"))
    keyword.index_facts(own, {f"{R}/shared/runbook.md": _fact("kestrelbay")})
    settings.paths.policy.write_text(broken)
    _format_3(settings)
    first = _cli(cfg, tmp_path, "status", "--json")
    assert "policy.yaml does not load" in first.stderr and "muninn search-index --all" in first.stderr, first.stderr
    assert not raven.exists() and not dense.cache_path(raven).exists()
    assert own.exists()     # the configured identity's own index: sync wrote it with its own key
