"""The CLI's edge: exit codes are an API, and no error ends in a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def run(*args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "muninn", *args], capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.mark.parametrize("args, code, needle", [
    (("no-such-command",), 2, "No such command"),
    (("export",), 2, "Missing argument"),
    (("--config", "/nonexistent/muninn.yaml", "status"), 2, "/nonexistent/muninn.yaml: config file not found"),
    (("ls",), 4, "no key named 'openviking:muninn:owner'"),
])
def test_errors_are_one_sentence_with_their_exit_code(args: tuple[str, ...], code: int, needle: str,
                                                      isolated_keyring: Path) -> None:
    out = run(*args)
    assert out.returncode == code, out.stderr
    assert needle in out.stderr
    assert "Traceback" not in out.stderr


def test_help_teaches_every_group() -> None:
    out = run("--help")
    assert out.returncode == 0
    for command in ("up", "doctor", "export", "sync", "search", "mcp", "secret", "access", "verify", "policy",
                    "nightly", "eval", "demo"):
        assert f" {command} " in out.stdout, command


def test_bad_config_line_is_named(tmp_path: Path) -> None:
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text("server:\n  port: 1933\nembed:\n  treads: 2\n")
    out = run("--config", str(cfg), "doctor")
    assert out.returncode == 2
    assert f"{cfg}:4: embed.treads: unknown key" in out.stderr.replace("\n", "")
