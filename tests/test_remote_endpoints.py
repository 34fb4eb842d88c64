"""Past one machine (issue 19): embeddings and rerank on other hosts, stood in for by separate local
processes on ports of their own (the embedding sidecar, OpenAI-compatible /v1/embeddings as TEI also
serves it; a TEI-compatible /rerank). The scores must be the in-process ones, and the test prints what
the network hop costs per search (one query embedding + one rerank of 20)."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from conftest import free_port

from muninn.core.config import EmbedSettings, RerankSettings
from muninn.plugins.search import dense, rerank

# Separate processes that load models (a minute or more on a busy machine): with the integration tests.
pytestmark = pytest.mark.integration

HERE = Path(__file__).parent
QUERY = "how did we roll back the postgres upgrade"
DOCS = [f"Fact {i}: " + text for i, text in enumerate([
    "Rollback of the postgres upgrade: restore the snapshot and repoint the app.",
    "The office wifi password rotates monthly; ask IT.",
    "Postgres major upgrade: pg_upgrade with hard links, test on staging first.",
    "Kafka consumer group billing lagged by 2 million messages.",
    "The wildcard certificate on the ingress expired at 02:00.",
] * 4)]


def _wait(url: str, proc: subprocess.Popen, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"{url}: the process exited with {proc.returncode}"
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"{url} did not come up")


@pytest.fixture(scope="module")
def remote_hosts(tmp_path_factory) -> Iterator[tuple[int, int]]:
    embed_port, rerank_port = free_port(), free_port()
    logs = tmp_path_factory.mktemp("remote")
    procs = [
        subprocess.Popen([sys.executable, "-m", "muninn.plugins.embed", "--host", "127.0.0.1", "--port",
                          str(embed_port)], stdout=(logs / "embed.log").open("w"), stderr=subprocess.STDOUT),
        subprocess.Popen([sys.executable, str(HERE / "tei_rerank.py"), str(rerank_port)],
                         stdout=(logs / "rerank.log").open("w"), stderr=subprocess.STDOUT),
    ]
    try:
        _wait(f"http://127.0.0.1:{embed_port}/health", procs[0])
        _wait(f"http://127.0.0.1:{rerank_port}/health", procs[1])
        yield embed_port, rerank_port
    finally:
        for p in procs:
            p.terminate()
            p.wait(10)


def _ms(fn) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def _p50(fn, runs: int = 15) -> float:
    fn()
    return statistics.median(_ms(fn) for _ in range(runs))


def _paired(remote, local, runs: int = 15) -> tuple[float, float]:
    """Median of remote minus local, back to back (a shared machine's load hits both alike), and local's p50."""
    remote(), local()
    pairs = [(_ms(remote), _ms(local)) for _ in range(runs)]
    return statistics.median(r - x for r, x in pairs), statistics.median(x for _, x in pairs)


def test_remote_rerank_scores_as_in_process_and_its_hop(remote_hosts: tuple[int, int]) -> None:
    _, port = remote_hosts
    remote = rerank.load(RerankSettings(model=f"endpoint:http://127.0.0.1:{port}", fallbacks=[]))
    local = rerank.OnnxBackend(str(rerank.packaged_path("cross-encoder/ms-marco-MiniLM-L-12-v2")), 256, 8)
    got, want = remote.rerank(QUERY, DOCS), local.rerank(QUERY, DOCS)
    assert got == pytest.approx(want, abs=1e-6)
    assert max(range(len(DOCS)), key=got.__getitem__) % 5 == 0      # the rollback fact wins
    inner = remote.inner   # past the (query, text) cache
    hop, base = _paired(lambda: inner.rerank(QUERY, DOCS), lambda: local.rerank(QUERY, DOCS))
    print(f"\nrerank of {len(DOCS)}: in-process {base:.1f} ms, the endpoint adds {hop:+.1f} ms (paired median)")


def test_remote_embeddings_are_the_sidecars_and_the_hop(remote_hosts: tuple[int, int], tmp_path: Path) -> None:
    port, _ = remote_hosts
    scorer = dense.DenseScorer(EmbedSettings(port=port), tmp_path / "cache.sqlite")
    vecs = scorer.embed([QUERY, DOCS[0]])
    assert vecs.shape == (2, 384) and np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    again = dense.DenseScorer(EmbedSettings(port=port), tmp_path / "other.sqlite").embed([QUERY])
    assert np.allclose(again[0], vecs[0], atol=1e-6)                # one text, one vector
    http = httpx.Client()
    url = f"http://127.0.0.1:{port}"
    rtt = _p50(lambda: http.get(f"{url}/health"))
    one = _p50(lambda: http.post(f"{url}/v1/embeddings", json={"input": QUERY}).raise_for_status())
    http.close()
    scorer.close()
    print(f"\nembedding endpoint: {rtt:.1f} ms round trip with no work, {one:.1f} ms for one query's vector (p50)")
