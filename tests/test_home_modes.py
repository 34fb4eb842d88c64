"""Everything muninn writes under its home is private (files 0600, folders 0700), whichever command
writes it, through the real CLI; `doctor` fails a loosened path with the fix, and the workspace
upgrade step tightens a home written before. (Root ignores modes, so these check the bits.)"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from faultserver import serve

from muninn.core import config, credentials
from muninn.plugins.stack import home_modes

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
AREA = "viking://resources/notes"


def _cli(cfg: Path, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "muninn", "--config", str(cfg), *args], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "MUNINN_HOME": str(cfg.parent / "home")})
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done


def _modes(home: Path) -> dict[str, int]:
    out = {}
    for root, dirs, files in os.walk(home):
        for name in (*dirs, *files):
            p = Path(root, name)
            out[str(p.relative_to(home))] = stat.S_IMODE(p.lstat().st_mode)
    return out


def _write_config(tmp: Path, **extra: object) -> Path:
    cfg = tmp / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp / "home"), **extra}))
    return cfg


def _export_all(tmp: Path) -> Path:
    cfg = _write_config(tmp, sources=[{"kind": "notes", "path": str(EXAMPLES / "notes"), "area": AREA},
                                      {"kind": "observations", "path": str(EXAMPLES / "observations.jsonl"),
                                       "area": "viking://resources/roadmap"}])
    _cli(cfg, "export", "all", "--json")
    return cfg


def _vault_sync(tmp: Path) -> Path:
    cfg = _write_config(tmp, vault={"files": [str(EXAMPLES / "secrets.yaml")]})
    _cli(cfg, "vault", "sync")
    return cfg


def _sync(tmp: Path) -> Path:
    out = tmp / "out"
    with serve() as (url, _state):
        cfg = _write_config(tmp, server={"url": url, "timeout": 10})
        credentials.for_server(config.load(cfg)).set(credentials.user_key_name("muninn", "owner"), "k")
        _cli(cfg, "export", "notes", str(EXAMPLES / "notes"), "--out", str(out))
        _cli(cfg, "sync", str(out), "--to", AREA, "--json")
        _cli(cfg, "search", "INC-1049", "--json")
    return cfg


WRITERS = {"export all": _export_all, "vault sync": _vault_sync, "sync + search": _sync}
# what each writer must have written under the home (so the check is never vacuous)
WROTE = {"export all": "exports", "vault sync": "vault/vault.sqlite", "sync + search": "search/muninn.owner.sqlite"}


@pytest.mark.parametrize("writer", WRITERS)
def test_every_file_a_command_writes_is_private(tmp_path: Path, isolated_keyring: Path, writer: str) -> None:
    saved = os.umask(0o022)      # the caller's usual umask: muninn must not depend on it
    try:
        cfg = WRITERS[writer](tmp_path)
    finally:
        os.umask(saved)
    home = config.load(cfg).workspace
    modes = _modes(home)
    assert any(k.startswith(WROTE[writer]) for k in modes), sorted(modes)
    loose = {k: oct(m) for k, m in modes.items() if m & 0o077}
    assert loose == {}, loose
    assert home_modes.loose(home) == [] and home_modes.check(config.load(cfg))[0].level == "ok"


LOOSENED = [("a file", "format.json", 0o644), ("a folder", "search", 0o755), ("group-writable", "format.json", 0o660),
            ("world-only", "format.json", 0o604), ("the home itself", ".", 0o755)]


@pytest.mark.parametrize("what, rel, mode", LOOSENED)
def test_doctor_fails_a_loosened_path_and_the_upgrade_tightens_it(tmp_path: Path, isolated_keyring: Path,
                                                                   what: str, rel: str, mode: int) -> None:
    cfg = _export_all(tmp_path)
    s = config.load(cfg)
    home = s.workspace
    (home / "search").mkdir(exist_ok=True)
    (home / rel).chmod(mode)
    [check] = home_modes.check(s)
    assert check.level == "fail" and str(home if rel == "." else home / rel) in check.detail, check.detail
    assert check.fix == f"chmod -R go-rwx {home}"
    # a workspace from before the step: the first command tightens everything, and doctor is content
    (home / "format.json").write_text(json.dumps({"format": 2}))
    (home / rel).chmod(mode)
    done = subprocess.run([sys.executable, "-m", "muninn", "--config", str(cfg), "status", "--json"],
                          capture_output=True, text=True, timeout=120)   # exit 1: no stack runs; no matter
    assert "Traceback" not in done.stderr, done.stderr
    assert home_modes.loose(home) == [], home_modes.loose(home)
    assert home_modes.check(s)[0].level == "ok"


def test_the_server_venv_in_the_home_is_left_alone(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "server-venv" / "bin").mkdir(parents=True)
    (home / "server-venv" / "bin" / "openviking-server").write_text("#!/bin/sh\n")
    (home / "server-venv" / "bin" / "openviking-server").chmod(0o755)
    home.chmod(0o700)
    assert home_modes.loose(home) == []
    home_modes.tighten(home)
    assert stat.S_IMODE((home / "server-venv" / "bin" / "openviking-server").stat().st_mode) == 0o755
