"""A question search meets every bad answer OpenViking's `find` can give, served for real from a
local HTTP server (tests/faultserver.py): it answers from the local keyword index with exit 0 and
one warning that names the server and the fix, never an empty or made-up answer. A wrong key is not
an outage: exit 5. An embedding sidecar that answers garbage leaves RRF order, said in a warning."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from faultserver import State, serve

from muninn.core import config, credentials
from muninn.core.errors import ExitCode
from muninn.plugins.search import keyword

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
AREA = "viking://resources/notes"
QUESTION = "how did we rotate the certificate"
ANSWER = f"{AREA}/runbooks/certificate-rotation.md"
IDENTIFIER = "INC-1049"
FIND = "/api/v1/search/find"
# fault -> what the warning must say about it
FIND_FAULTS = {
    "invalid-json": "malformed reply", "empty-200": "malformed reply", "json-array": "malformed reply",
    "null-result": "malformed reply", "html-500": "HTTP 500", "cut": "connection",
    "slow": "did not answer within search.timeout (1.5 s)", "busy": "busy",
}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("faults-search") / "out"
    done = subprocess.run([sys.executable, "-m", "muninn", "export", "notes", str(EXAMPLES / "notes"), "--out",
                           str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return {f"{AREA}/{p.relative_to(out).as_posix()}": p.read_text() for p in out.rglob("*.md")}


@pytest.fixture
def stack(tmp_path: Path, isolated_keyring: Path, exported: dict[str, str]) -> Iterator[tuple[Path, State, State]]:
    """OpenViking and the sidecar both played by fault servers; a sound keyword index beside them."""
    with serve() as (url, state), serve() as (embed_url, embed):
        state.files.update(exported)
        host, port = embed_url.rsplit(":", 1)
        cfg = tmp_path / "muninn.yaml"
        cfg.write_text(yaml.safe_dump({
            "server": {"url": url, "timeout": 10},
            "embed": {"host": host.removeprefix("http://"), "port": int(port)},
            "search": {"timeout": 1.5, "rerank": {"enabled": False}}}))
        s = config.load(cfg)
        credentials.for_server(s).set(
            credentials.user_key_name(s.openviking.account, s.openviking.user), "test-key")
        keyword.index_facts(s.paths.search_index(), exported)
        yield cfg, state, embed


def search(cfg: Path, query: str) -> tuple[subprocess.CompletedProcess, dict]:
    done = subprocess.run([sys.executable, "-m", "muninn", "--config", str(cfg), "search", query, "--json"],
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done, (json.loads(done.stdout) if done.returncode == 0 else {})


@pytest.mark.parametrize("fault", FIND_FAULTS)
def test_a_bad_find_answers_from_keywords_and_says_why(stack, fault: str) -> None:
    cfg, state, _ = stack
    state.fault, state.fault_paths, state.slow_seconds = fault, (FIND,), 4.0
    done, result = search(cfg, QUESTION)
    assert done.returncode == 0, done.stderr
    assert result["route"] == "keyword" and result["hits"][0]["uri"] == ANSWER
    assert all("vector" not in h["stage_scores"] for h in result["hits"])    # nothing made up for the vectors
    [warning] = [w for w in result["warnings"] if "vector stage skipped" in w]
    assert "keyword index" in warning and FIND_FAULTS[fault] in warning and state.calls.count(f"POST {FIND}"), warning
    assert state.calls.count(f"POST {FIND}") == 1                               # one try, no retry storm
    # an identifier search never needed find: the server's /health answers, so no warning
    done, ident = search(cfg, IDENTIFIER)
    assert done.returncode == 0 and ident["hits"] and "1049" in json.dumps(ident["hits"][0])
    assert ident["warnings"] == []
    # the fault gone, the same question takes the vectors again, without a warning
    state.fault = None
    done, again = search(cfg, QUESTION)
    assert done.returncode == 0 and again["route"] == "hybrid"
    assert any("vector" in h["stage_scores"] for h in again["hits"])
    assert not any("vector stage skipped" in w for w in again["warnings"])


def test_a_wrong_key_is_an_error_not_an_outage(stack) -> None:
    cfg, state, _ = stack
    state.fault, state.fault_paths = "unauthenticated", (FIND,)
    done, _ = search(cfg, QUESTION)
    lines = [ln for ln in done.stderr.strip().splitlines() if ln.strip()]
    assert done.returncode == ExitCode.SERVER and done.stdout == ""
    assert len(lines) == 1 and "refused for key" in lines[0], done.stderr


def test_no_keyword_index_and_no_server_is_exit_5(stack) -> None:
    cfg, state, _ = stack
    config.load(cfg).paths.search_index().unlink()
    state.fault, state.fault_paths = "html-500", (FIND,)
    done, _ = search(cfg, QUESTION)
    lines = [ln for ln in done.stderr.strip().splitlines() if ln.strip()]
    assert done.returncode == ExitCode.SERVER and done.stdout == "", done.stderr
    assert any("HTTP 500" in ln for ln in lines)


@pytest.mark.parametrize("fault", ["invalid-json", "empty-200", "json-array", "html-500", "cut", "slow"])
def test_a_bad_sidecar_leaves_rrf_order_and_says_so(stack, fault: str) -> None:
    cfg, _, embed = stack
    embed.fault, embed.slow_seconds = fault, 4.0       # the sidecar client waits search.timeout, 1.5 s
    done, result = search(cfg, QUESTION)
    assert done.returncode == 0, done.stderr
    assert result["route"] == "hybrid" and result["hits"]
    [warning] = [w for w in result["warnings"] if "linear fusion skipped" in w]
    assert "embedding sidecar at http://127.0.0.1:" in warning, warning


@pytest.mark.parametrize("fault", [None, "html-500", "invalid-json", "slow"])
def test_status_and_doctor_name_the_url_its_latency_and_a_real_find(stack, fault: str | None) -> None:
    from muninn.plugins.stack import doctor

    cfg, state, _ = stack
    state.fault, state.fault_paths, state.slow_seconds = fault, (FIND,), 4.0
    done = subprocess.run([sys.executable, "-m", "muninn", "--config", str(cfg), "status", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    server = {c["name"]: c for c in json.loads(done.stdout)}["server"]
    url = config.load(cfg).server.base_url
    assert server["url"] == url and server["pid"] is None and "external" in server["detail"]
    assert server["latency_ms"] is not None                       # /health answered, and how fast
    assert done.returncode == (0 if fault is None else ExitCode.CHECK_FAILED)
    assert (server["find_ms"] is not None) == (fault is None) and server["healthy"] == (fault is None)
    [check] = [c for c in doctor.running(config.load(cfg)) if c.name.startswith("server")]
    assert check.level == ("ok" if fault is None else "fail") and "pid" not in check.detail
    if fault:
        assert "a real find failed" in check.detail and url in check.fix and "runs" in check.fix
