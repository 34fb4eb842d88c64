"""Server faults, served for real from a local HTTP server (tests/faultserver.py): every command that
needs the server (`ls`, `read`, `sync`) meets every bad answer and exits 5 with one sentence, no
traceback and no answer at all (never an empty one); a cut or busy sync converges once the fault is gone."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from faultserver import FAULTS, State, serve

from muninn.core import config, credentials
from muninn.core.errors import ExitCode

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
AREA = "viking://resources/notes"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("faults-export") / "out"
    done = subprocess.run([sys.executable, "-m", "muninn", "export", "notes", str(EXAMPLES / "notes"), "--out",
                           str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture
def stack(tmp_path: Path, isolated_keyring: Path) -> Iterator[tuple[Path, State]]:
    with serve() as (url, state):
        cfg = tmp_path / "muninn.yaml"
        cfg.write_text(yaml.safe_dump({"server": {"url": url, "timeout": 1.5, "busy_wait": 2}}))
        s = config.load(cfg)
        credentials.for_server(s).set(
            credentials.user_key_name(s.openviking.account, s.openviking.user), "test-key")
        yield cfg, state


def cli(cfg: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "muninn", "--config", str(cfg), *args], capture_output=True,
                          text=True, timeout=120)


def one_sentence(done: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in done.stderr.strip().splitlines() if ln.strip()]
    assert "Traceback" not in done.stderr and len(lines) == 1, done.stderr
    return lines[0]


COMMANDS = {
    "ls": ("ls", AREA, "--json"),
    "ls-r": ("ls", "-r", AREA, "--json"),
    "read": ("read", f"{AREA}/a.md"),
    "sync": ("sync", "{out}", "--to", AREA, "--json"),
}
EXPECT = {"invalid-json": "malformed reply", "empty-200": "malformed reply", "json-array": "malformed reply",
          "null-result": "malformed reply", "html-500": "HTTP 500", "slow": "timed out",
          "cut": "connection", "busy": "busy"}


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("command", COMMANDS)
def test_every_bad_answer_is_exit_5_and_one_sentence(stack, exported: Path, command: str, fault: str) -> None:
    cfg, state = stack
    state.files[f"{AREA}/a.md"] = "---\nid: a\n---\nA fact.\n"    # a folder that holds a file
    state.fault = fault
    state.slow_seconds = 3.0                                   # the client waits 1.5 s
    done = cli(cfg, *(a.format(out=exported) for a in COMMANDS[command]))
    assert done.returncode == ExitCode.SERVER, (done.returncode, done.stderr, done.stdout)
    line = one_sentence(done)
    assert EXPECT[fault] in line and state.calls, line
    assert done.stdout == ""                                   # no answer at all, never an empty one
    if fault == "html-500":
        assert "Internal Server Error" in line and "<h1>" in line  # the server's words, flattened to one line


def test_a_sync_cut_mid_batch_converges_on_rerun(stack, exported: Path) -> None:
    cfg, state = stack
    state.fault, state.fault_paths, state.fault_times = "cut", ("/api/v1/content/batch-write",), 1
    first = cli(cfg, "sync", str(exported), "--to", AREA, "--json")
    assert first.returncode == ExitCode.SERVER and "broke during batch write" in one_sentence(first)
    local = {p.relative_to(exported).as_posix(): p.read_text() for p in exported.rglob("*.md")}
    rerun = cli(cfg, "sync", str(exported), "--to", AREA, "--json")
    assert rerun.returncode == 0, rerun.stderr
    assert state.files == {f"{AREA}/{rel}": text for rel, text in local.items()}   # exactly, no duplicates
    again = cli(cfg, "sync", str(exported), "--to", AREA, "--json")
    assert again.returncode == 0 and '"written": 0' in again.stdout


@pytest.mark.parametrize("busy_times", [1, 3])
def test_sync_waits_while_the_server_is_busy(stack, exported: Path, busy_times: int) -> None:
    cfg, state = stack
    state.fault, state.fault_paths, state.fault_times = "busy", ("/api/v1/content/batch-write",), busy_times
    done = cli(cfg, "sync", str(exported), "--to", AREA, "--json")
    assert done.returncode == 0, done.stderr
    assert len(state.files) == len(list(exported.rglob("*.md")))
    assert state.calls.count("POST /api/v1/content/batch-write") == busy_times + 1


def test_sync_gives_up_on_a_server_that_stays_busy_with_a_sentence(stack, exported: Path) -> None:
    cfg, state = stack
    state.fault, state.fault_paths = "busy", ("/api/v1/content/batch-write",)
    done = cli(cfg, "sync", str(exported), "--to", AREA, "--json")
    assert done.returncode == ExitCode.SERVER
    line = one_sentence(done)
    assert "still busy after 2 s" in line and "server.busy_wait" in line
    assert 2 <= state.calls.count("POST /api/v1/content/batch-write") <= 6   # bounded, with backoff
    assert state.files == {}
