"""The verify sandbox: a proof command the guard let through cannot write locally, and still reaches the network."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import tcp_listener

from muninn.core import config
from muninn.plugins.access import doctor_check, sandbox, sweep

pytestmark = pytest.mark.skipif(sandbox.available() is None, reason="no sandbox works on this machine "
                                "(doctor says so: see test_doctor_names_the_sandbox)")


KINDS = sandbox.working()


def _run(script: str, mode: str = "auto") -> subprocess.CompletedProcess:
    return subprocess.run(sandbox.wrap(script, mode), capture_output=True, text=True, timeout=30, check=False)


@pytest.mark.parametrize("write", [
    "touch {d}/x", "mkdir {d}/x", "echo x > {d}/x", "cp /etc/hostname {d}/x", "ln -s /etc {d}/x",
    "touch /tmp/muninn-sandbox-probe-x", "touch ~/muninn-sandbox-probe-x", "touch /dev/shm/muninn-probe-x",
])
@pytest.mark.parametrize("kind", KINDS)
def test_local_writes_fail_inside(kind: str, write: str, tmp_path: Path) -> None:
    _run(write.format(d=tmp_path), kind)   # it may succeed in a private tmpfs: nothing may be left here
    assert not (tmp_path / "x").exists() and not Path("/dev/shm/muninn-probe-x").exists()
    assert not Path("/tmp/muninn-sandbox-probe-x").exists()
    assert not Path("~/muninn-sandbox-probe-x").expanduser().exists()


@pytest.mark.parametrize("kind", KINDS)
def test_dev_null_and_loopback_network_still_work(kind: str) -> None:
    with tcp_listener() as sock:
        port = sock.getsockname()[1]
        done = _run(f"echo x > /dev/null && exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected", kind)
    assert done.returncode == 0 and "connected" in done.stdout, done.stderr


def test_auto_takes_the_first_that_works() -> None:
    assert sandbox.available() == KINDS[0] and set(KINDS) <= {"bwrap", "unshare"}


def test_off_runs_plain_bash(tmp_path: Path) -> None:
    assert sandbox.wrap("true", "off") == ["bash", "-c", "true"]
    assert _run(f"touch {tmp_path}/x", "off").returncode == 0 and (tmp_path / "x").exists()


def test_doctor_names_the_sandbox() -> None:
    settings = config.Settings()
    [line] = doctor_check.verify_sandbox(settings)
    assert line.level == "ok" and line.detail.startswith(sandbox.available() or "none")
    settings.verify.sandbox = "off"
    [line] = doctor_check.verify_sandbox(settings)
    assert line.level == "warn" and "off" in line.detail


@pytest.mark.parametrize("mode, written", [("auto", False), ("off", True)])
def test_a_guard_miss_in_the_sweep_cannot_write(mode: str, written: bool, tmp_path: Path) -> None:
    # A `hostname` that the guard allows but that writes: what a miss in the rules would look like.
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "hostname").write_text(f"#!/bin/sh\ntouch {tmp_path}/pwned\necho host-1\n")
    (fake / "hostname").chmod(0o755)
    (tmp_path / "inventory.yaml").write_text(yaml.safe_dump([{"id": "h", "kind": "host", "verify": "hostname -f"}]))
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "ws"), "inventory": {"files": ["inventory.yaml"]},
                                   "vault": {"key_name": f"vault:key:{tmp_path.name}"},
                                   "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"},
                                   "verify": {"sandbox": mode}}))
    settings = config.load(cfg)
    [result] = sweep.run(settings, sweep.plan(settings), env={"PATH": f"{fake}:/usr/bin:/bin"}, store=False)
    assert (tmp_path / "pwned").exists() is written
    assert result.status == "ok" and "host-1" in result.reason   # the proof itself still ran


def test_setup_steps_run_as_before_and_only_the_judged_command_is_sandboxed(tmp_path: Path) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "hostname").write_text(f"#!/bin/sh\ntouch {tmp_path}/pwned\necho \"host-1 $FROM_SETUP\"\n")
    (fake / "hostname").chmod(0o755)
    (tmp_path / "env.sh").write_text(f"touch {tmp_path}/setup-ran\nexport FROM_SETUP=exported\n")
    (tmp_path / "inventory.yaml").write_text(yaml.safe_dump([{"id": "h", "kind": "host", "verify": "hostname -f",
                                                              "access": [f"source {tmp_path}/env.sh"]}]))
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "ws"), "inventory": {"files": ["inventory.yaml"]},
                                   "vault": {"key_name": f"vault:key:{tmp_path.name}"},
                                   "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"}}))
    settings = config.load(cfg)
    [result] = sweep.run(settings, sweep.plan(settings), env={"PATH": f"{fake}:/usr/bin:/bin"}, store=False)
    assert (tmp_path / "setup-ran").exists() and not (tmp_path / "pwned").exists()
    assert result.status == "ok" and "host-1 exported" in result.reason, result.reason
