"""The embedding door (issue 50): the sidecar runs the local model or forwards to an endpoint behind it, and
applies the prompts and embed.fact_text the same way either way; what a provider bills is metered against
embed.max_billed_tokens, and the call that would cross it is refused before it is sent."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from conftest import free_port
from fastapi.testclient import TestClient

from muninn.core import billing, factfile
from muninn.core import embed_prompts as prompts
from muninn.core.config import EmbedSettings
from muninn.core.errors import ExitCode
from muninn.plugins.embed.forward import Forwarder
from muninn.plugins.embed.server import create_app
from muninn.plugins.search import dense

HERE = Path(__file__).parent
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
KEY = "sk-standin-0123456789abcdef"
FACT = factfile.render(factfile.FactFile(
    id="notes/pg.md#wal", source="notes", kind="note", title="WAL", body="Set `wal_level = replica` and restart.",
    lead="Note section “WAL” from pg.md.", breadcrumb=("PostgreSQL", "WAL"), tags=("pg",), date="2025-01-02",
    source_path="pg.md")).text
E5_LIKE = prompts.Prompts(query="query: ", passage="passage: ")


def _serve(app, port: int) -> None:
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise AssertionError("the remote sidecar did not come up")


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    """The stand-in provider (tests/billing_provider.py), in its own process; it wants KEY."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(HERE / "billing_provider.py"), str(port), "8"],
                            env={**os.environ, "STANDIN_KEY": KEY})
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                httpx.get(f"{url}/health", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def _calls(url: str) -> dict:
    return httpx.get(f"{url}/calls").json()


def _post(app, body: dict) -> httpx.Response:
    return TestClient(app).post("/v1/embeddings", json=body)


def test_the_same_model_behind_the_door_gives_the_local_vectors() -> None:
    """A second sidecar plays the remote host (OpenAI-compatible, no prompts, no fact rule: a plain endpoint);
    the door in front of it applies e5-style prompts and the fact rule as the local sidecar does."""
    from muninn.plugins.embed.model import load

    model, dim = load(EmbedSettings(model=MINILM))
    port = free_port()
    _serve(create_app(model, dim, "all-MiniLM-L6-v2", fact_text=False, prompts=prompts.Prompts()), port)
    local = create_app(model, dim, "all-MiniLM-L6-v2", fact_text=True, prompts=E5_LIKE)
    door = create_app(Forwarder("openai", f"http://127.0.0.1:{port}/v1", "all-MiniLM-L6-v2", dim), dim,
                      "all-MiniLM-L6-v2", fact_text=True, prompts=E5_LIKE)
    for body in ({"input": ["what is wal_level?"], "input_type": "query"},
                 {"input": [FACT, "wal_level replica restarts postgres"], "input_type": "passage"},
                 {"input": [FACT, "what is wal_level?"]},             # the side read from the text
                 {"input": ["x"], "dimensions": 64}):
        a, b = _post(local, body), _post(door, body)
        assert a.status_code == b.status_code == 200, b.text
        for va, vb in zip(a.json()["data"], b.json()["data"], strict=True):
            u, v = np.asarray(va["embedding"]), np.asarray(vb["embedding"])
            assert float(u @ v / np.linalg.norm(u) / np.linalg.norm(v)) >= 0.9999


@pytest.mark.parametrize("shape", ["tei", "openai", "voyage"])
def test_each_provider_shape_with_its_key(provider: str, shape: str, tmp_path: Path) -> None:
    before = _calls(provider)
    upstream = provider if shape == "tei" else f"{provider}/v1"
    meter = billing.Meter(tmp_path / "billed.sqlite", None)
    door = create_app(Forwarder(shape, upstream, "m", 8, meter, api_key=KEY), 8, "m", prompts=prompts.Prompts())
    resp = _post(door, {"input": [FACT, "what is wal_level?"]})
    assert resp.status_code == 200, resp.text
    assert len(resp.json()["data"]) == 2
    after = _calls(provider)
    assert after["calls"] > before["calls"] and after["keys"] > before["keys"]
    if shape == "voyage":      # one call per side, each saying which
        assert after["input_types"][-2:] == ["document", "query"]
    if shape != "tei":         # reconciled with the provider's usage: what it billed, not the bound
        assert meter.usage().used == after["billed"] - before["billed"] < billing.bound([FACT, "what is wal_level?"])


def test_a_wrong_key_is_one_sentence(provider: str, tmp_path: Path) -> None:
    meter = billing.Meter(tmp_path / "billed.sqlite", 10_000)
    door = create_app(Forwarder("openai", f"{provider}/v1", "m", 8, meter, api_key="sk-wrong"), 8, "m")
    resp = _post(door, {"input": ["hello"]})
    assert resp.status_code == 502
    assert "HTTP 401" in resp.json()["detail"] and "muninn embed key" in resp.json()["detail"]
    assert meter.usage().used == 0         # refused by the provider: nothing billed, nothing reserved


def test_the_cap_stops_a_loop_over_the_same_batch(provider: str, tmp_path: Path) -> None:
    """A bug asks for the same batch again and again, through a door whose cache keeps nothing (as a batch
    larger than its cache would): the cap stops it, with a sentence, and the provider billed under it."""
    cap = 2_000
    meter = billing.Meter(tmp_path / "billed.sqlite", cap)
    door = create_app(Forwarder("openai", f"{provider}/v1", "m", 8, meter, api_key=KEY), 8, "m", recent=0)
    batch = [f"fact {i}: the nightly backup of host db-{i} ran at 02:00" for i in range(8)]
    before = _calls(provider)
    answered = 0
    for _ in range(1000):
        resp = _post(door, {"input": batch})
        if resp.status_code != 200:
            break
        answered += 1
    assert resp.status_code == 402, resp.text
    assert "embed.max_billed_tokens" in resp.json()["detail"] and "a rerun resumes" in resp.json()["detail"]
    billed = _calls(provider)["billed"] - before["billed"]
    assert 0 < answered < 1000 and _calls(provider)["calls"] - before["calls"] == answered
    assert billed == meter.usage().used <= cap
    assert meter.usage().refused == 1
    # A client of the door (muninn's dense scorer) turns the refusal into its exit code.
    port = free_port()
    _serve(door, port)
    scorer = dense.DenseScorer(EmbedSettings(model="m", model_name="m", port=port))
    with pytest.raises(dense.BilledCapReached) as refused:
        scorer._post(batch)
    assert refused.value.exit_code == ExitCode.BILLED_CAP == 27
    assert "embed.max_billed_tokens" in refused.value.message


def test_a_call_cut_off_stays_counted_and_a_raised_cap_resumes(tmp_path: Path) -> None:
    meter = billing.Meter(tmp_path / "billed.sqlite", 100)
    kept = meter.reserve("openai", 60)            # a kill before the reply: no usage ever settles it
    with pytest.raises(billing.CapReached):
        meter.reserve("openai", 60)
    assert meter.usage().used == 60
    meter.settle(kept, 12)
    billing.Meter(tmp_path / "billed.sqlite", 100).reserve("openai", 60)   # another process, same ledger
    assert meter.usage().used == 72


def test_the_bound_is_never_below_what_is_billed() -> None:
    texts = ["plain ascii words", "ünïcödé and 日本語のテキスト", "🦜" * 10, ""]
    # Each token covers at least one UTF-8 byte; two markers per input.
    assert billing.bound(texts) == sum(len(t.encode()) for t in texts) + 2 * len(texts)
    assert billing.bound(["abcd"]) >= 1 + 2


def test_a_sync_batch_that_could_cross_the_cap_is_refused_before_it_is_written(tmp_path: Path) -> None:
    from muninn.core.config import Settings

    s = Settings(home=tmp_path / "home", embed={"provider": "openai", "upstream": "http://x/v1",
                                                "max_billed_tokens": 100})
    billing.for_settings(s).settle(billing.for_settings(s).reserve("openai", 10), 10)
    assert billing.would_cross(s, ["a" * 80]) is None                     # 10 + 82 fits under 100
    refused = billing.would_cross(s, ["a" * 90])
    assert refused is not None and refused.exit_code == 27 and "10 of embed.max_billed_tokens 100" in refused.message
    local = Settings(home=tmp_path / "home", embed={"max_billed_tokens": 1})
    assert billing.would_cross(local, ["a" * 90]) is None                 # nothing billed behind a local model
