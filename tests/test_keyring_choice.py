"""keyring ranks keyrings.alt's plaintext file above its `fail` backend, so on a headless host it picks a
base64 file on its own. muninn refuses that (exit 4, a sentence saying how to choose) unless the person
chose: `keyring.backend` in muninn.yaml, PYTHON_KEYRING_BACKEND, or keyring's own keyringrc.cfg."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from muninn.core.errors import ExitCode

FILE = "keyrings.alt.file.PlaintextKeyring"


def _run(tmp_path: Path, *args: str, env_backend: str | None = None, rc: str | None = None,
         yaml_backend: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHON_KEYRING_BACKEND", "MUNINN_CONFIG")}
    env.update({"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "XDG_DATA_HOME": str(tmp_path / "data"),
                "MUNINN_HOME": str(tmp_path / "home")})
    if env_backend:
        env["PYTHON_KEYRING_BACKEND"] = env_backend
    if rc:
        (tmp_path / "cfg/python_keyring").mkdir(parents=True)
        (tmp_path / "cfg/python_keyring/keyringrc.cfg").write_text(f"[backend]\ndefault-keyring={rc}\n")
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(f"keyring: {{backend: {yaml_backend}}}\n" if yaml_backend else "{}\n")
    return subprocess.run([sys.executable, "-m", "muninn", "--config", str(cfg), *args], capture_output=True,
                          text=True, env=env, timeout=120)


def _can_pick_plaintext_alone() -> bool:
    import keyring.backend

    best = max(keyring.backend.get_all_keyring(), key=lambda b: b.priority)
    return f"{type(best).__module__}.{type(best).__qualname__}" == FILE


# Commands that need the keyring before anything else.
COMMANDS = [["search", "hello"], ["read", "viking://resources/a.md"], ["secret", "show", "x"], ["ls", "viking://resources"]]


@pytest.mark.skipif(not _can_pick_plaintext_alone(), reason="keyring would not pick the file backend here")
@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a))
def test_a_plaintext_backend_keyring_picked_alone_is_refused(tmp_path: Path, argv: list[str]) -> None:
    proc = _run(tmp_path, *argv)
    assert proc.returncode == ExitCode.KEYRING, proc.stderr
    assert proc.stderr.startswith("error: keyring chose the plaintext file backend") and "Traceback" not in proc.stderr
    assert "PYTHON_KEYRING_BACKEND" in proc.stderr and "keyring: {backend:" in proc.stderr


@pytest.mark.parametrize("how", ["env", "keyringrc", "yaml"])
def test_a_chosen_plaintext_backend_is_used(tmp_path: Path, how: str) -> None:
    proc = _run(tmp_path, "search", "hello", env_backend=FILE if how == "env" else None,
                rc=FILE if how == "keyringrc" else None, yaml_backend=FILE if how == "yaml" else None)
    # Past the keyring: the next problem is the missing key of the CLI's own user, not the backend.
    assert "chose the plaintext" not in proc.stderr, proc.stderr
    assert proc.returncode == ExitCode.KEYRING and "no key named" in proc.stderr
