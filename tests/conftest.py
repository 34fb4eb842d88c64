"""Shared fixtures. The whole session runs in its own XDG dirs with an explicit file keyring;
integration tests share one real stack (openviking-server + the embedding sidecar) on free ports."""

from __future__ import annotations

import contextlib
import io
import os
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from muninn.core import config, paths
from muninn.core.client import OpenViking
from muninn.core.config import Settings

# Captured before isolation: the server venv is shared (it takes minutes to build), and so are the fetched
# models: the tests' stacks are new workspaces, so they embed with e5-small-v2, which `muninn up` downloads
# once per machine (a test that checks the fetch itself points MUNINN_MODELS at its own folder).
REAL_SERVER_VENV = str(paths.server_venv())
REAL_MODELS = str(paths.models_dir())
SESSION_DIR = Path(tempfile.mkdtemp(prefix="muninn-tests-"))
FILE_KEYRING = "keyrings.alt.file.PlaintextKeyring"


def pytest_configure(config: pytest.Config) -> None:
    os.environ.update({
        "XDG_DATA_HOME": str(SESSION_DIR / "xdg-data"),
        "XDG_CONFIG_HOME": str(SESSION_DIR / "xdg-config"),
        "MUNINN_HOME": str(SESSION_DIR / "home"),
        "MUNINN_SERVER_VENV": REAL_SERVER_VENV,
        "MUNINN_MODELS": REAL_MODELS,
        "PYTHON_KEYRING_BACKEND": FILE_KEYRING,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        # A test's `muninn search` runs in-process; tests/test_serve*.py start `muninn serve` themselves.
        "MUNINN_SEARCH__SERVE_IDLE": "0",
    })
    os.environ.pop("MUNINN_CONFIG", None)


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test gets its own workspace and config dir; the keyring file stays session-wide."""
    monkeypatch.setenv("MUNINN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("MUNINN_CONFIG", raising=False)
    return tmp_path


@pytest.fixture
def isolated_keyring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A keyring file of this test's own."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    return tmp_path / "xdg-data"


@contextlib.contextmanager
def tcp_listener(backlog: int = 8) -> Iterator[socket.socket]:
    """A loopback TCP listener on a free port: plays a VPN endpoint or jump host in prerequisite tests."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(backlog)
    try:
        yield sock
    finally:
        sock.close()


def drain_pty(primary: int) -> bytes:
    """Everything written to a pseudo-terminal until its last writer closes it (EIO on Linux), then close it."""
    data = b""
    while True:
        try:
            chunk = os.read(primary, 4096)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    os.close(primary)
    return data


def free_port() -> int:
    """A port nothing listens on (bound and released): also what a down prerequisite looks like."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RecordingEncoder:
    """Stands in for an embedding model: records every text it reads, and gives each distinct text one
    fixed unit vector (8 dimensions)."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, texts: list[str], **_: object):
        import numpy as np

        self.seen.extend(texts)
        rows = [np.random.default_rng(abs(hash(t)) % 2**32).normal(size=8) for t in texts]
        return np.array([r / np.linalg.norm(r) for r in rows], dtype=np.float32)


@dataclass
class Stack:
    """The running test stack and ways to reach it."""

    settings: Settings
    config_path: Path
    root: OpenViking
    env: dict[str, str] = field(default_factory=dict)

    def new_account(self, prefix: str = "t") -> tuple[str, OpenViking]:
        """A fresh account whose admin user's client is returned: tests never share a tree."""
        account = f"{prefix}{uuid.uuid4().hex[:10]}"
        key = self.root.create_account(account, "owner")
        return account, OpenViking(self.settings.server.base_url, key, key_name=f"{account}:owner")

    def cli(self, *args: str, input: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "muninn", *args], capture_output=True, text=True,
                              env=self.env, input=input, timeout=timeout)


@contextlib.contextmanager
def own_stack(base: Path, extra: dict | None = None, keyring_dir: Path | None = None) -> Iterator[Stack]:
    """A second real stack of its own (home, ports, keyring file unless `keyring_dir` is shared): for
    tests that kill or stop its processes, which must never touch the session's shared stack."""
    from muninn.plugins.stack import lifecycle as stack_mod

    cfg: dict = {"home": str(base / "home"), "server": {"port": free_port(), "venv": REAL_SERVER_VENV},
                 "embed": {"port": free_port()}, "keyring": {"backend": FILE_KEYRING}}
    for key, value in (extra or {}).items():   # one level deep: `server: {start_timeout}` keeps the port
        cfg[key] = {**cfg[key], **value} if isinstance(cfg.get(key), dict) and isinstance(value, dict) else value
    base.mkdir(parents=True, exist_ok=True)
    path = base / "muninn.yaml"
    path.write_text(yaml.safe_dump(cfg))
    env = {**os.environ, "MUNINN_CONFIG": str(path), "MUNINN_HOME": cfg["home"],
           "XDG_DATA_HOME": str(keyring_dir or base / "xdg")}
    done = subprocess.run([sys.executable, "-m", "muninn", "up"], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    saved = os.environ.get("XDG_DATA_HOME")
    os.environ["XDG_DATA_HOME"] = env["XDG_DATA_HOME"]
    try:
        settings = config.load(path)
        root = OpenViking.root(settings)
    finally:
        if saved is not None:
            os.environ["XDG_DATA_HOME"] = saved
    try:
        yield Stack(settings=settings, config_path=path, root=root, env=env)
    finally:
        root.close()
        stack_mod.down(settings, say=lambda m: None)


@pytest.fixture(scope="session")
def stack() -> Stack:
    from muninn.plugins.stack import lifecycle as stack_mod

    home = SESSION_DIR / "stack-home"
    cfg = {
        "home": str(home),
        "server": {"port": free_port(), "venv": REAL_SERVER_VENV},
        "embed": {"port": free_port()},
        "keyring": {"backend": FILE_KEYRING},
    }
    path = SESSION_DIR / "muninn.yaml"
    path.write_text(yaml.safe_dump(cfg))
    settings = config.load(path)
    # The stack's keys live in the session keyring, whichever test happens to start it.
    session_keyring = str(SESSION_DIR / "xdg-data")
    saved = os.environ.get("XDG_DATA_HOME")
    os.environ["XDG_DATA_HOME"] = session_keyring
    try:
        stack_mod.up(settings, say=lambda m: None, config_file=path)
        root = OpenViking.root(settings)
    finally:
        if saved is not None:
            os.environ["XDG_DATA_HOME"] = saved
    env = {**os.environ, "MUNINN_CONFIG": str(path), "MUNINN_HOME": str(home), "XDG_DATA_HOME": session_keyring}
    try:
        yield Stack(settings=settings, config_path=path, root=root, env=env)
    finally:
        root.close()
        stack_mod.down(settings, say=lambda m: None)


@dataclass
class Ended:
    """What one `muninn` run left: its exit code and what it printed."""

    exit_code: int
    stdout: str
    stderr: str


@dataclass
class CliHome:
    """A fresh HOME after `muninn init --notes HOME/notes --yes`, with the real CLI run as a subprocess in it."""

    path: Path

    def run(self, *args: str) -> subprocess.CompletedProcess:
        home = self.path
        env = {**os.environ, "HOME": str(home), "CODEX_HOME": str(home / ".codex"),
               "XDG_CONFIG_HOME": str(home / ".config")}
        return subprocess.run([sys.executable, "-m", "muninn", *args], capture_output=True, text=True, env=env,
                              cwd=home, timeout=120)


@pytest.fixture
def cli_home(tmp_path: Path) -> CliHome:
    home = CliHome(tmp_path / "h")
    (home.path / "notes").mkdir(parents=True)
    done = home.run("init", "--notes", str(home.path / "notes"), "--yes")
    assert done.returncode == 0, done.stderr
    return home


@pytest.fixture
def run_muninn(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """The installed entry point (`muninn.cli.main`) in this process, as a shell would run it; `stdin`,
    when given, is its stdin (a pipe)."""
    from muninn import cli

    def run(argv: list[str], stdin: str | None = None) -> Ended:
        monkeypatch.setattr(sys, "argv", ["muninn", *argv])
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        with pytest.raises(SystemExit) as ended:
            cli.main()
        out = capsys.readouterr()
        return Ended(int(ended.value.code or 0), out.out, out.err)

    return run


RAVEN_POLICY = """\
version: 1
areas: {raven: viking://resources/agents/raven}
readers:
  raven:
    kind: agent
    account: home
    user: raven
    areas: {raven: write}
    tools: [%s]
"""


@pytest.fixture
def raven_policy(tmp_path: Path) -> Callable[[Iterable[str]], Path]:
    """Writes `tmp_path/policy.yaml`: one agent reader, raven, writing its own area and holding `tools`."""

    def write(tools: Iterable[str]) -> Path:
        path = tmp_path / "policy.yaml"
        path.write_text(RAVEN_POLICY % ", ".join(tools))
        return path

    return write
