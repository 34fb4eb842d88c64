"""Search vectors filled ahead of searches (fact_vectors.py): what the nightly fill stores must be what
linear fusion asks for, each text is embedded once across readers and nights, and a dead sidecar is
a domain error. The embedding itself is faked here (a hash vector); the real sidecar is covered in
test_nightly_refresh.py."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from conftest import free_port

from muninn.core.config import EmbedSettings, Settings
from muninn.plugins.search import dense, fact_vectors, keyword
from muninn.plugins.search.stages.content import ContentFetcher

ROOT = "viking://resources/shared/notes"


def _fact(title: str, body: str, context: str = "") -> str:
    ctx = f"\n<!-- context: the section around this fact -->\n{context}\n" if context else ""
    return f"---\ndate: \"2025-05-14T00:00:00+00:00\"\n---\n# {title}\n\n{body}\n{ctx}"


FILES = {
    f"{ROOT}/restart.md": _fact("Restart the worker", "systemctl restart worker on app07", "deploys > worker"),
    f"{ROOT}/backup.md": _fact("Nightly backup", "restic runs at 02:00 to the NAS " * 40),   # past MAX_CHARS
    f"{ROOT}/vpn.md": _fact("VPN", "the tunnel is wireguard on port 51820", "network > vpn"),
    f"{ROOT}/empty.md": _fact("Empty", ""),
}


def _vec(text: str) -> np.ndarray:
    v = np.frombuffer(hashlib.sha256(text.encode()).digest(), dtype=np.uint8).astype(np.float32)
    return v / np.linalg.norm(v)


class Sidecar:
    """Stands in for the embedding sidecar: counts every text it is sent."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def __call__(self, texts: list[str]) -> list[np.ndarray]:
        self.sent += texts
        return [_vec(t) for t in texts]


@pytest.fixture
def sidecar(monkeypatch) -> Sidecar:
    fake = Sidecar()
    monkeypatch.setattr(dense.DenseScorer, "_post", lambda self, texts, *_: fake(texts))
    return fake


def _index(path: Path, files: dict[str, str]) -> Path:
    keyword.index_facts(path, files)
    return path


def _settings(**search) -> Settings:
    # The first model's vectors only: the second model's fill goes through the real sidecar
    # (test_search_second.py), which this file's stand-in is not.
    return Settings(embed={"second_model": "none"}, search=search)


def _asked_by_linear(index_path: Path, uris: list[str]) -> list[str]:
    """The texts stages/linear.py embeds for these candidates, read through the real content stage."""
    index = keyword.KeywordIndex(index_path)
    try:
        docs = ContentFetcher(None, index).fetch(uris, server=False)
    finally:
        index.close()
    return [docs[u].text for u in uris] + [docs[u].fact or docs[u].body for u in uris]


def test_after_a_fill_linear_fusion_embeds_only_the_question(tmp_path, sidecar) -> None:
    path = _index(tmp_path / "kw.sqlite", FILES)
    filled = fact_vectors.fill(_settings(), [path])
    assert filled.indexes == 1 and filled.texts == 2 * len(FILES) and filled.embedded == len(sidecar.sent) > 0
    sidecar.sent.clear()
    scorer = dense.DenseScorer(EmbedSettings(), dense.cache_path(path))
    try:
        scorer.cosines("how do I restart the worker", _asked_by_linear(path, list(FILES)))
    finally:
        scorer.close()
    assert sidecar.sent == ["how do I restart the worker"]


def test_a_second_night_embeds_only_what_changed(tmp_path, sidecar) -> None:
    path = _index(tmp_path / "kw.sqlite", FILES)
    fact_vectors.fill(_settings(), [path])
    assert fact_vectors.fill(_settings(), [path]).embedded == 0
    changed = _fact("VPN", "the tunnel moved to port 51821", "network > vpn")
    _index(path, {f"{ROOT}/vpn.md": changed})
    sidecar.sent.clear()
    again = fact_vectors.fill(_settings(), [path])
    assert 1 <= again.embedded <= 2 and all("51821" in t for t in sidecar.sent)


def test_a_text_two_readers_share_is_embedded_once(tmp_path, sidecar) -> None:
    owner = _index(tmp_path / "owner.sqlite", FILES)
    agent = _index(tmp_path / "agent.sqlite", {u: t for u, t in FILES.items() if "vpn" in u})
    filled = fact_vectors.fill(_settings(), [owner, agent, owner])    # a path named twice counts once
    assert filled.indexes == 2 and len(sidecar.sent) == len(set(sidecar.sent)) == filled.embedded
    sidecar.sent.clear()
    scorer = dense.DenseScorer(EmbedSettings(), dense.cache_path(agent))
    try:
        scorer.embed(_asked_by_linear(agent, [f"{ROOT}/vpn.md"]))
    finally:
        scorer.close()
    assert sidecar.sent == [], "the agent's own cache file holds the copied vectors"
    # ...and only those: no vector of a file the agent cannot read lands in its cache
    with sqlite3.connect(dense.cache_path(agent)) as conn:
        (rows,) = conn.execute("SELECT count(*) FROM vectors").fetchone()
    agent_index = keyword.KeywordIndex(agent)
    try:
        assert rows == len(set(fact_vectors.texts(agent_index))) < filled.texts
    finally:
        agent_index.close()


def test_a_reader_added_later_copies_what_another_reader_holds(tmp_path, sidecar) -> None:
    owner = _index(tmp_path / "owner.sqlite", FILES)
    fact_vectors.fill(_settings(), [owner])                     # an earlier night, before the agent existed
    sidecar.sent.clear()
    agent = _index(tmp_path / "agent.sqlite", {u: t for u, t in FILES.items() if "vpn" in u})
    later = fact_vectors.fill(_settings(), [owner, agent])
    assert later.embedded == 0 and sidecar.sent == [] and later.indexes == 2


def test_the_configured_identitys_cache_gives_to_a_single_reader(tmp_path, sidecar) -> None:
    settings = Settings(home=str(tmp_path / "home"), embed={"second_model": "none"})
    own = _index(settings.paths.search_index(), FILES)           # filled by `muninn search-index` or the nightly
    fact_vectors.fill(settings, [own])
    sidecar.sent.clear()
    agent = _index(tmp_path / "agent.sqlite", {u: t for u, t in FILES.items() if "restart" in u})
    assert fact_vectors.fill(settings, [agent]).embedded == 0 and sidecar.sent == []   # `--profile agent`


def test_a_damaged_neighbour_does_not_stop_a_readers_fill(tmp_path, sidecar) -> None:
    owner = _index(tmp_path / "owner.sqlite", FILES)
    fact_vectors.fill(_settings(), [owner])
    _damaged(dense.cache_path(owner), "garbage")
    agent = _index(tmp_path / "agent.sqlite", {u: t for u, t in FILES.items() if "vpn" in u})
    with pytest.raises(dense.VectorCacheBusy):
        fact_vectors.fill(_settings(), [owner, agent])                # the owner's own cache is named
    sidecar.sent.clear()
    assert fact_vectors.fill(_settings(), [agent]).embedded == len(sidecar.sent) == 2


def test_nothing_is_embedded_where_nothing_reads_it(tmp_path, sidecar) -> None:
    path = _index(tmp_path / "kw.sqlite", FILES)
    assert fact_vectors.fill(_settings(fusion="rrf"), [path]).embedded == 0      # rrf reads no cosines
    assert fact_vectors.fill(_settings(), [tmp_path / "never-built.sqlite"]).indexes == 0
    assert sidecar.sent == [] and not dense.cache_path(tmp_path / "never-built.sqlite").exists()


def test_a_dead_sidecar_is_a_domain_error_and_keeps_what_was_stored(tmp_path) -> None:
    path = _index(tmp_path / "kw.sqlite", FILES)
    settings = Settings(embed={"port": free_port()}, search={"timeout": 2})
    with pytest.raises(dense.DenseUnavailable, match="not reachable"):
        fact_vectors.fill(settings, [path])
    assert keyword.KeywordIndex(path).count() == len(FILES)


def _damaged(path: Path, how: str) -> None:
    if how == "garbage":
        path.write_bytes(bytes((i * 37 + 11) % 256 for i in range(8192)))
    elif how == "truncated":
        path.write_bytes(path.read_bytes()[:100])
    else:
        raise AssertionError(how)


@pytest.mark.parametrize("how", ["garbage", "truncated"])
def test_a_damaged_vector_cache_never_fails_a_search_and_the_fill_says_so(tmp_path, sidecar, how) -> None:
    path = _index(tmp_path / "kw.sqlite", FILES)
    fact_vectors.fill(_settings(), [path])
    _damaged(dense.cache_path(path), how)
    scorer = dense.DenseScorer(EmbedSettings(), dense.cache_path(path))
    try:
        cos = scorer.cosines("restart the worker", _asked_by_linear(path, list(FILES)))
    finally:
        scorer.close()
    assert len(cos) == 2 * len(FILES) and all(-1.0 <= c <= 1.0 for c in cos)
    with pytest.raises(dense.VectorCacheBusy, match="could not be written.*only a cache"):
        fact_vectors.fill(_settings(), [path])


def test_a_cache_another_process_holds_locked_does_not_fail_a_search(tmp_path, sidecar, monkeypatch) -> None:
    monkeypatch.setattr(dense, "BUSY_SECONDS", 0.2)
    path = _index(tmp_path / "kw.sqlite", FILES)
    fact_vectors.fill(_settings(), [path])
    sent_before = len(sidecar.sent)
    holder = sqlite3.connect(dense.cache_path(path), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")             # the nightly mid-write, as a search sees it
    try:
        scorer = dense.DenseScorer(EmbedSettings(), dense.cache_path(path))
        try:
            cos = scorer.cosines("a question never asked", _asked_by_linear(path, list(FILES)))
        finally:
            scorer.close()
        assert len(cos) == 2 * len(FILES)
        assert sidecar.sent[-1:] == ["a question never asked"] and len(sidecar.sent) - sent_before == 1, \
            "the filled vectors are read while another process writes (WAL)"
        with pytest.raises(dense.VectorCacheBusy):
            fact_vectors.fill(_settings(), [_index(tmp_path / "kw.sqlite", {f"{ROOT}/new.md": _fact("New", "x y")})])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
