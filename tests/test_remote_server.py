"""Past one machine, first class (issue 50): a remote OpenViking that `muninn up` did not start, on ports of
its own, whose embeddings (and muninn's) go through the workspace's door to a paid provider that bills (the
stand-in tests/billing_provider.py). Its root key is stored with `muninn server key` (proven by a call, a
wrong one refused with nothing stored), the provider's with `muninn embed key`; then `up` starts only the
door, and `policy apply`, `export/sync` (refused at the cap, then resumed), `search`, `status`, `backup
create` and `doctor` work against that server. Neither key is ever written to a file of the workspace."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import FILE_KEYRING, REAL_SERVER_VENV, free_port

from muninn.core.config import Settings
from muninn.plugins.stack import doctor, lifecycle

pytestmark = pytest.mark.integration

HERE = Path(__file__).parent
PROVIDER_KEY = "sk-standin-" + secrets.token_hex(12)
ROOT_KEY = "root-" + secrets.token_hex(16)
NOTE = ("# Bastion\n\nThe bastion host for the platform cluster is jump01.example.com; bring the office "
        "WireGuard tunnel up with `wg-quick up office` before ssh.\n")


def _wait(url: str, proc: subprocess.Popen, log: Path, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"{url} exited {proc.returncode}:\n{log.read_text()[-2000:]}"
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"{url} did not come up:\n{log.read_text()[-2000:]}")


class Host:
    """The other host: a billing provider and an openviking-server the test starts, not muninn."""

    def __init__(self, base: Path) -> None:
        self.provider_port, self.server_port, self.door_port = free_port(), free_port(), free_port()
        self.provider = f"http://127.0.0.1:{self.provider_port}"
        self.server = f"http://127.0.0.1:{self.server_port}"
        self.base = base
        self.procs: list[subprocess.Popen] = []

    def start(self) -> None:
        log = self.base / "provider.log"
        cmd = [sys.executable, str(HERE / "billing_provider.py"), str(self.provider_port), "384"]
        self.procs.append(subprocess.Popen(cmd, env={**os.environ, "STANDIN_KEY": PROVIDER_KEY},
                                           stdout=log.open("w"), stderr=subprocess.STDOUT))
        _wait(self.provider, self.procs[-1], log)
        # Its admin starts from muninn's ov.conf (docs/deployment.md), embedding through the workspace's door.
        other = Settings(home=self.base / "ov", server={"port": self.server_port},
                         embed={"port": self.door_port, "provider": "openai", "upstream": f"{self.provider}/v1"})
        conf = self.base / "ov.conf"
        conf.write_text(json.dumps(lifecycle.ov_conf(other), indent=2))
        log = self.base / "server.log"
        self.procs.append(subprocess.Popen([f"{REAL_SERVER_VENV}/bin/openviking-server", "--config", str(conf)],
                                           env={**os.environ, lifecycle.ROOT_KEY_ENV: ROOT_KEY}, cwd=self.base,
                                           stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True))
        _wait(self.server, self.procs[-1], log)

    def billed(self) -> int:
        return httpx.get(f"{self.provider}/calls").json()["billed"]

    def stop(self) -> None:
        for p in reversed(self.procs):
            p.terminate()
            p.wait(30)


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    h = Host(tmp_path)
    try:
        h.start()
        yield h
    finally:
        h.stop()


def test_a_remote_server_and_a_paid_provider_behind_the_door(host: Host, tmp_path: Path) -> None:
    me = tmp_path / "me"
    (me / "notes").mkdir(parents=True)
    (me / "notes" / "bastion.md").write_text(NOTE)
    env = {"HOME": str(me), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "LANG": "C.UTF-8",
           "PYTHON_KEYRING_BACKEND": FILE_KEYRING, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "MUNINN_SERVER__URL": host.server, "MUNINN_EMBED__PORT": str(host.door_port),
           "MUNINN_EMBED__PROVIDER": "openai", "MUNINN_EMBED__UPSTREAM": f"{host.provider}/v1",
           "MUNINN_EMBED__MAX_BILLED_TOKENS": "200000"}

    def muninn(*args: str, input: str | None = None, code: int = 0) -> subprocess.CompletedProcess:
        done = subprocess.run([sys.executable, "-m", "muninn", *args], capture_output=True, text=True, env=env,
                              cwd=me, timeout=600, input=input)
        assert done.returncode == code, f"muninn {' '.join(args)} exited {done.returncode}: {done.stderr}"
        return done

    muninn("init", "--notes", "~/notes", "--yes")
    # Before the key is stored, doctor's fix names the command that stores it.
    assert f"muninn server key --url {host.server}" in doctor._no_keys_fix(Settings(server={"url": host.server}))
    muninn("embed", "key", "--stdin", input=PROVIDER_KEY + "\n")
    wrong = muninn("server", "key", "--stdin", input="root-wrong\n", code=5)
    assert "openviking:root" in wrong.stderr and len(wrong.stderr.strip().splitlines()) == 1, wrong.stderr
    stored = muninn("server", "key", "--stdin", input=ROOT_KEY + "\n")
    assert "the key is a root key" in stored.stderr and "account home/owner" in stored.stderr, stored.stderr
    try:
        up = muninn("up")
        assert "muninn does not manage that server" in up.stderr and "the door to openai" in up.stderr, up.stderr
        muninn("policy", "apply")
        muninn("export", "all")
        muninn("sync", "all")
        assert host.billed() > 0     # OpenViking embedded the notes through the door, billed by the provider
        status = muninn("status", "--json")
        parts = {c["name"]: c for c in json.loads(status.stdout)}
        assert parts["server"]["healthy"] and parts["server"]["pid"] is None
        assert "door to openai" in parts["embed"]["detail"] and "of 200,000" in parts["embed"]["detail"]
        assert f"{host.billed():,} billed tokens" in parts["embed"]["detail"]   # the ledger is the provider's bill
        muninn("backup", "create")
        # The cap: a sync batch whose embedding could cross it is refused before it is written (27); every
        # earlier batch stays, and with the cap raised the rerun writes exactly that batch, found after.
        (me / "notes" / "vpn.md").write_text("# VPN\n\nThe office VPN concentrator is vpn-gw02; its certificate "
                                             "rotates every ninety days.\n")
        muninn("export", "all")
        before = host.billed()
        env["MUNINN_EMBED__MAX_BILLED_TOKENS"] = str(before + 40)     # what this sync's command reads
        refused = muninn("sync", "all", code=27)
        assert "embed.max_billed_tokens" in refused.stderr and "rerun resumes" in refused.stderr, refused.stderr
        assert host.billed() == before      # nothing written, nothing sent, nothing billed
        env["MUNINN_EMBED__MAX_BILLED_TOKENS"] = "200000"
        assert "1 written" in muninn("sync", "all").stderr
        found = json.loads(muninn("search", "office VPN concentrator", "--json", "--no-rerank").stdout)
        assert any(h["uri"].endswith("vpn.md") for h in found["hits"]), found
        checks = {c["name"]: c for c in json.loads(muninn("doctor", "--json").stdout)["checks"]}
        assert checks["billed tokens"]["level"] == "ok" and "of 200,000" in checks["billed tokens"]["detail"]
        assert "key in the keyring" in checks["embedding door"]["detail"]
    finally:
        muninn("down")
    assert httpx.get(f"{host.server}/health").status_code == 200     # `down` left the other host's server alone
    # Neither key in any file muninn wrote: config, workspace, logs, backups (the keyring file holds them
    # base64-encoded only, and is the keyring's).
    for path in me.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            assert PROVIDER_KEY.encode() not in data and ROOT_KEY.encode() not in data, path
