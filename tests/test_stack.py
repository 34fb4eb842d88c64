"""The local stack and the client layer, against the real openviking-server and sidecar."""

from __future__ import annotations

import base64
import json
import socket
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from muninn.core import config
from muninn.core.client import OpenViking
from muninn.core.errors import AuthError, NotFound, ServerDown
from muninn.plugins.stack import lifecycle as stack_mod

pytestmark = pytest.mark.integration

TOPICS = ["postgres replication lag", "nginx TLS certificate renewal", "kubernetes node drain", "backup restore drill",
          "DNS resolver timeouts", "disk full on the log volume", "VPN tunnel flapping", "redis memory eviction",
          "grafana alert routing", "terraform state lock"]


def test_up_twice_is_a_noop_and_status_is_json(stack) -> None:
    before = stack_mod.status(stack.settings)
    out = stack.cli("up")
    assert out.returncode == 0, out.stderr
    assert "already running" in out.stderr
    after = json.loads(stack.cli("status", "--json").stdout)
    assert [c["pid"] for c in after] == [c.pid for c in before]
    assert all(c["healthy"] and c["running"] for c in after)


def test_busy_port_is_one_sentence_and_nonzero(stack, tmp_path: Path) -> None:
    cfg = tmp_path / "m.yaml"
    # The running test server's port, from a workspace that did not start it.
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "h"), "server": {"port": stack.settings.server.port},
                                   "embed": {"port": stack.settings.embed.port}}))
    env = {**stack.env, "MUNINN_CONFIG": str(cfg), "MUNINN_HOME": str(tmp_path / "h")}
    out = subprocess.run([sys.executable, "-m", "muninn", "up"], env=env, capture_output=True, text=True)
    assert out.returncode == 6
    assert f"port {stack.settings.embed.port} on 127.0.0.1 is in use by another process" in out.stderr
    assert "Traceback" not in out.stderr


def test_stale_pid_file_is_reported_and_cleared(tmp_path: Path) -> None:
    settings = config.load(environ={"MUNINN_HOME": str(tmp_path)})
    state = settings.paths.stack / "stack.json"
    state.parent.mkdir(parents=True)
    state.write_text(json.dumps({"server": {"pid": 999_999_9}, "embed": {"pid": 999_999_8}}))
    notes = [c.detail for c in stack_mod.status(settings)]
    assert all("stale PID" in n or "not started" in n or "answering" in n for n in notes)
    said: list[str] = []
    assert stack_mod.down(settings, say=said.append) == 0
    assert any("stale PID file removed" in s for s in said)
    assert json.loads(state.read_text()) == {}


def test_fifty_facts_written_found_read_and_counted(stack) -> None:
    account, client = stack.new_account("fnd")
    area = "viking://resources/facts"
    client.ensure_dir(area)
    files = {}
    for i in range(50):
        topic = TOPICS[i % len(TOPICS)]
        files[f"{area}/{i // 10:02d}/fact-{i:03d}.md"] = (
            f"# {topic.capitalize()} (note {i})\nOn host app{i:02d} the team handled {topic}; case {i}.\n")
    for folder in sorted({u.rsplit("/", 1)[0] for u in files}):
        client.ensure_dir(folder)
    client.batch_write(area, files)
    client.wait()
    hits = client.find("the certificate for the web server expired", area, limit=5)
    assert hits and "nginx TLS" in client.read(hits[0]["uri"])
    hits = client.find("which database replica fell behind", area, limit=5)
    assert "postgres replication" in client.read(hits[0]["uri"])
    one = f"{area}/03/fact-031.md"
    assert client.read(one) == files[one]
    walked = sorted(e.uri for e in client.walk(area))
    assert walked == sorted(files)


def test_error_paths_are_one_sentence(stack) -> None:
    account, client = stack.new_account("err")
    with pytest.raises(NotFound, match="viking://resources/missing.md does not exist"):
        client.read("viking://resources/missing.md")
    wrong = OpenViking(stack.settings.server.base_url, "bm90.YQ.wrong", key_name="openviking:nope:nobody")
    with pytest.raises(AuthError, match="refused for key 'openviking:nope:nobody'"):
        wrong.ls("viking://resources")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    with pytest.raises(ServerDown, match=f"not reachable at http://127.0.0.1:{dead}"):
        OpenViking(f"http://127.0.0.1:{dead}", "k", key_name="k").ls("viking://resources")


def test_cli_against_a_down_server_exits_nonzero_with_one_sentence(stack, tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    env = {**stack.env, "MUNINN_SERVER__PORT": str(dead)}
    # Keys are scoped by the server's URL: give the dead URL the stack's user key, so the CLI gets as
    # far as the server (with no key it stops earlier, at exit 4).
    from muninn.core import credentials

    there = stack.settings.model_copy(update={"server": stack.settings.server.model_copy(update={"port": dead})})
    name = credentials.user_key_name(there.openviking.account, there.openviking.user)
    credentials.for_server(there).set(name, credentials.for_server(stack.settings).require(name, fix="-"))
    out = subprocess.run([sys.executable, "-m", "muninn", "ls", "viking://resources"], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 5
    assert f"OpenViking is not reachable at http://127.0.0.1:{dead}" in out.stderr
    assert "Traceback" not in out.stderr


def test_sidecar_answers_the_openai_client_in_both_encodings(stack) -> None:
    from openai import OpenAI

    api = OpenAI(base_url=f"{stack.settings.embed.base_url}/v1", api_key="unused")
    floats = api.embeddings.create(model="all-MiniLM-L6-v2", input=["restart the VPN", "rotate the token"])
    assert len(floats.data) == 2 and len(floats.data[0].embedding) == 384
    b64 = api.embeddings.create(model="all-MiniLM-L6-v2", input="restart the VPN", encoding_format="base64")
    vec = b64.data[0].embedding
    if isinstance(vec, str):  # older clients hand the raw base64 back
        vec = list(struct.unpack(f"<{len(base64.b64decode(vec)) // 4}f", base64.b64decode(vec)))
    assert vec == pytest.approx(floats.data[0].embedding, abs=1e-5)
    assert sum(x * x for x in vec) == pytest.approx(1.0, abs=1e-3)
    short = api.embeddings.create(model="m", input="restart the VPN", dimensions=128)
    assert len(short.data[0].embedding) == 128
    assert sum(x * x for x in short.data[0].embedding) == pytest.approx(1.0, abs=1e-3)
    import httpx
    too_big = httpx.post(f"{stack.settings.embed.base_url}/v1/embeddings", json={"input": "x", "dimensions": 4096})
    assert too_big.status_code == 400 and "exceeds" in too_big.text


def test_default_account_key_was_stored_and_works(stack) -> None:
    client = OpenViking.user(stack.settings)
    assert client.ls("viking://resources") is not None
    out = json.loads(stack.cli("doctor", "--json").stdout)
    names = {c["name"]: c for c in out["checks"]}
    assert "openviking:muninn:owner" in names["keyring keys"]["detail"]
    assert all(v not in json.dumps(out) for v in [client._api_key])


@pytest.mark.parametrize("script, needle", [
    ("import sys; print('boom: cannot bind'); sys.exit(3)", "exited with code 3"),
])
def test_a_crashing_server_gives_the_log_tail(tmp_path: Path, script: str, needle: str) -> None:
    from muninn.core.errors import StackError

    log = tmp_path / "server.log"
    proc = stack_mod._spawn([sys.executable, "-c", script], log, {}, tmp_path)
    with pytest.raises(StackError) as info:
        stack_mod._wait_healthy("openviking-server", "http://127.0.0.1:9", proc, log, timeout=30)
    assert needle in str(info.value)
    assert "boom: cannot bind" in str(info.value)


def test_a_known_server_failure_is_one_sentence_with_its_fix(tmp_path) -> None:
    from muninn.core.config import Settings
    from muninn.plugins.stack import lifecycle as stack_mod

    log = tmp_path / "server.log"
    with log.open("wb") as fh:
        proc = subprocess.Popen([sys.executable, "-c", "import sys; print('Traceback ...\\n"
                                 "openviking.storage.errors.EmbeddingRebuildRequiredError: mismatch'); sys.exit(3)"],
                                stdout=fh, stderr=subprocess.STDOUT)
    proc.wait()
    known = stack_mod._server_failures(Settings(home=tmp_path))
    with pytest.raises(stack_mod.StackError, match="another embedding model") as err:
        stack_mod._wait_healthy("openviking-server", "http://127.0.0.1:9", proc, log, timeout=5, known=known)
    assert "Traceback" not in err.value.message and "intfloat/e5-small-v2" in err.value.message
    fix = err.value.fix or ""
    assert "muninn embed migrate --to intfloat/e5-small-v2" in fix and "BAAI/bge-small-en-v1.5" in fix
