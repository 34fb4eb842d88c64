"""`secret exec` output that tries to go around the masked pipes: the terminal, stdin, inherited
descriptors, a pty of the child's own, and a value split between stdout and stderr.

Each terminal case runs twice under a real pty: once as the bare command (the control: proves the
trick reaches the screen) and once through the real `muninn secret exec` (the value must not).
"""

from __future__ import annotations

import hashlib
import io
import os
import pty
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from muninn.core import config
from muninn.guards.redact.mask import masking_redactor
from muninn.plugins.access.inventory import Inventory
from muninn.plugins.access.runner import run_masked, same_place
from muninn.plugins.access.vault import Vault

SECRET = "tty_Zq7kP2xW9mL4vB8nR1sT"
VAR = "TERM_TOKEN"
MARK = "[REDACTED:term-token]"
MUNINN = f"{shlex.quote(sys.executable)} -m muninn"


@pytest.fixture
def vault(tmp_path: Path, isolated_keyring: Path) -> Vault:
    secrets = tmp_path / "secrets.yaml"
    secrets.write_text(yaml.safe_dump([{"id": "term-token", "service": "tty", "value": SECRET}]))
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(yaml.safe_dump([{"id": "box", "kind": "host", "secrets": ["term-token"]}]))
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"vault": {"files": [secrets.name]}, "inventory": {"files": [inventory.name]},
                                   "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"}}))
    v = Vault.open(config.load(cfg), who="tester")
    v.sync()
    return v


def _env(vault: Vault) -> dict[str, str]:
    env = {**os.environ, "MUNINN_CONFIG": str(vault.settings.source_file)}
    env.pop(VAR, None)
    return env


def under_pty(line: str, env: dict[str, str], cwd: Path, timeout: float = 60) -> bytes:
    """Run `bash -c line` as a terminal session would: the pty is its controlling terminal and fds 0-2."""
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover (the child execs at once)
        os.chdir(cwd)
        os.execvpe("bash", ["bash", "-c", line], env)
    data, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: every holder of the pty's other side has gone
            break
        if not chunk:
            break
        data += chunk
    os.close(fd)
    os.waitpid(pid, 0)
    return data


# (case id, what the parent shell sets up, what the child does). Every child ends by printing END,
# so a case cannot pass by not running.
TERMINAL_WAYS = [
    ("dev-tty", "", f'printf "%s\\n" "${VAR}" > /dev/tty'),
    ("fd-0", "", f'printf "%s\\n" "${VAR}" >&0'),
    ("dev-stdin", "", f'printf "%s\\n" "${VAR}" > /dev/stdin'),
    ("proc-self-fd-0", "", f'printf "%s\\n" "${VAR}" > /proc/self/fd/0'),
    ("exec-3-dev-tty", "", f'exec 3<>/dev/tty; printf "%s\\n" "${VAR}" >&3'),
    ("python-open-dev-tty", "", f"{shlex.quote(sys.executable)} -c 'import os; "
     f"fd = os.open(\"/dev/tty\", os.O_WRONLY); os.write(fd, os.environ[\"{VAR}\"].encode() + b\"\\n\")'"),
    ("python-stdin-fd", "", f"{shlex.quote(sys.executable)} -c 'import os; "
     f"os.write(0, os.environ[\"{VAR}\"].encode() + b\"\\n\")'"),
    ("inherited-fd-3", "exec 3<>/dev/tty; ", f'printf "%s\\n" "${VAR}" >&3'),
    ("inherited-fd-9-dup-of-1", "exec 9>&1; ", f'printf "%s\\n" "${VAR}" >&9'),
    ("python-pty-spawn", "", f"{shlex.quote(sys.executable)} -c 'import pty; "
     f"pty.spawn([\"sh\", \"-c\", \"printf \\\"%s\\\\n\\\" \\\"${VAR}\\\"\"])'"),
    pytest.param("", f"script -qec 'printf \"%s\\n\" \"${VAR}\"' /dev/null", id="script-pty",
                 marks=pytest.mark.skipif(not shutil.which("script"), reason="no `script` here")),
    ("background-after-exit", "", f'( sleep 0.3; printf "%s\\n" "${VAR}" > /dev/tty ) & printf "%s\\n" "${VAR}" >&0'),
    ("tty-reopened-by-name", "", f'printf "%s\\n" "${VAR}" > "$(tty 2>/dev/null || echo /dev/tty)"'),
]


FRONTS = {"secret-exec": "secret exec term-token", "access-exec": "access exec box"}


@pytest.mark.parametrize("front", FRONTS)
@pytest.mark.parametrize(("setup", "trick"), [c if hasattr(c, "marks") else pytest.param(*c[1:], id=c[0])
                                              for c in TERMINAL_WAYS])
def test_no_way_to_the_terminal(vault: Vault, tmp_path: Path, setup: str, trick: str, front: str) -> None:
    env = _env(vault)
    if front == "secret-exec":  # the control, once per trick: from a shell that holds the value it reaches the screen
        shown = under_pty(f"{setup}{trick}; sleep 0.5; echo END", {**env, VAR: SECRET}, tmp_path)
        assert SECRET.encode() in shown, f"control did not reach the terminal: {shown!r}"
    # Through muninn: the command ran to its end, and the value never appeared on the terminal.
    child = f"{trick}; sleep 0.5; echo END"
    shown = under_pty(f"{setup}{MUNINN} {FRONTS[front]} -- bash -c {shlex.quote(child)}", env, tmp_path)
    assert b"END" in shown, shown
    assert SECRET.encode() not in shown, shown
    assert SECRET[:8].encode() not in shown, shown


def test_masked_output_still_reaches_the_terminal(vault: Vault, tmp_path: Path) -> None:
    shown = under_pty(f"{MUNINN} secret exec term-token -- bash -c 'echo \"got ${VAR}\"; echo warn >&2'",
                      _env(vault), tmp_path)
    assert f"got {MARK}".encode() in shown and b"warn" in shown and SECRET.encode() not in shown


def test_the_child_is_not_in_our_session_and_has_no_terminal(vault: Vault, tmp_path: Path) -> None:
    probe = (f"{shlex.quote(sys.executable)} -c 'import os, sys; print(os.getsid(0) == os.getpid(), "
             "os.isatty(0), os.isatty(1), os.isatty(2), sorted(int(f) for f in os.listdir(\"/proc/self/fd\")))'")
    shown = under_pty(f"{MUNINN} secret exec term-token -- bash -c {shlex.quote('exec ' + probe)}", _env(vault),
                      tmp_path)
    # Own session leader; no terminal on 0, 1 or 2; nothing open beyond them (the listing's own fd aside).
    assert b"True False False False [0, 1, 2, 3]" in shown, shown


# --- stdin: /dev/null, never the caller's stream (the MCP server's JSON-RPC, a terminal, a pipe) ----

STREAM = b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "recall_read"}}\n'
READERS = [
    "cat", "cat /dev/stdin", "cat /proc/self/fd/0", "read -r line; echo \"read:$line\"", "head -c 200 <&0",
    f"{shlex.quote(sys.executable)} -c 'import sys; print(repr(sys.stdin.buffer.read()))'",
    f"{shlex.quote(sys.executable)} -c 'import os; print(repr(os.read(0, 200)))'",
]


@pytest.mark.parametrize("reader", READERS)
def test_cli_child_reads_nothing_of_our_stdin(vault: Vault, reader: str) -> None:
    done = subprocess.run(["bash", "-c", f"{MUNINN} secret exec term-token -- bash -c {shlex.quote(reader)}; "
                           "echo END"], input=STREAM * 50, capture_output=True, env=_env(vault), timeout=60)
    assert b"END" in done.stdout and b"jsonrpc" not in done.stdout + done.stderr, done


_IN_PROCESS = """
import io, sys
from muninn.core import config
from muninn.plugins.access.inventory import Inventory
from muninn.plugins.access.vault import Vault
settings = config.load(sys.argv[1])
out = io.BytesIO()
if sys.argv[2] == "vault":
    Vault.open(settings).exec("term-token", ["bash", "-c", sys.argv[3]], stdout=out, stderr=out)
else:  # what recall_access_exec calls, inside the MCP server whose stdin is the client's stream
    Inventory.open(settings).exec("box", sys.argv[3], stdout=out, stderr=out)
sys.stdout.buffer.write(out.getvalue() + b"END")
"""


@pytest.mark.parametrize("front", ["vault", "inventory"])
@pytest.mark.parametrize("reader", READERS)
def test_server_child_reads_nothing_of_the_server_stdin(vault: Vault, front: str, reader: str) -> None:
    done = subprocess.run([sys.executable, "-c", _IN_PROCESS, str(vault.settings.source_file), front, reader],
                          input=STREAM * 50, capture_output=True, env=_env(vault), timeout=60)
    assert done.returncode == 0 and done.stdout.endswith(b"END"), done.stderr
    assert b"jsonrpc" not in done.stdout, done.stdout


def test_stdin_option_still_hands_over_the_value(vault: Vault) -> None:
    out = io.BytesIO()
    # Compared by hash: a variable holding the value itself never reaches the child.
    same = 'read -r v; [ "$(printf %s "$v" | sha256sum | cut -d" " -f1)" = "$EXPECT" ] && echo same'
    vault.exec("term-token", ["bash", "-c", same], stdin=True, stdout=out, stderr=io.BytesIO(),
               base_env={**os.environ, "EXPECT": hashlib.sha256(SECRET.encode()).hexdigest()})
    assert out.getvalue() == b"same\n"


# --- merged streams: halves of a value on fd 1 and fd 2 ----------------------------------------

def _halves(pieces: list[tuple[int, int, int]]) -> str:
    """A child that writes SECRET[a:b] to fd n for each (n, a, b), pausing so each is its own read."""
    writes = "; ".join(f"os.write({n}, s[{a}:{b}].encode()); time.sleep(0.05)" for n, a, b in pieces)
    return f"import os, time; s = os.environ['{VAR}']; {writes}; os.write(1, b' END')"


N = len(SECRET)
SPLITS = {
    "half-out-half-err": [(1, 0, N // 2), (2, N // 2, N)],
    "half-err-half-out": [(2, 0, N // 2), (1, N // 2, N)],
    "thirds-1-2-1": [(1, 0, 8), (2, 8, 16), (1, 16, N)],
    "every-char-alternating": [(1 + i % 2, i, i + 1) for i in range(N)],
    "one-char-on-err": [(1, 0, 11), (2, 11, 12), (1, 12, N)],
}


@pytest.mark.parametrize("split", SPLITS, ids=list(SPLITS))
@pytest.mark.parametrize("place", ["2>&1 into a pipe", "one file opened twice", "a pty"])
def test_halves_split_across_stdout_and_stderr(vault: Vault, tmp_path: Path, split: str, place: str) -> None:
    code = _halves(SPLITS[split])
    run = f"{MUNINN} secret exec term-token -- {shlex.quote(sys.executable)} -c {shlex.quote(code)}"
    if place == "a pty":
        shown = under_pty(run, _env(vault), tmp_path)
    elif place == "one file opened twice":
        target = tmp_path / "out.log"
        subprocess.run(["bash", "-c", f"{run} > {target} 2>> {target}"], env=_env(vault), timeout=60, check=True)
        shown = target.read_bytes()
    else:
        shown = subprocess.run(["bash", "-c", f"{run} 2>&1"], capture_output=True, env=_env(vault), timeout=60,
                               check=True).stdout
    assert b"END" in shown and MARK.encode() in shown, shown
    for n, a, b in SPLITS[split]:
        if b - a >= 4:
            assert SECRET[a:b].encode() not in shown, (n, shown)


@pytest.mark.parametrize("split", SPLITS, ids=list(SPLITS))
def test_halves_through_the_server_path(vault: Vault, split: str) -> None:
    """recall_access_exec passes one buffer for both streams: masked as one."""
    out = io.BytesIO()
    inv = Inventory.open(vault.settings)
    result = inv.exec("box", [sys.executable, "-c", _halves(SPLITS[split])], stdout=out, stderr=out, vault=vault)
    assert result.exit_code == 0 and out.getvalue().startswith(MARK.encode()), out.getvalue()
    assert "term-token" in result.hits


def test_separate_places_stay_separate(vault: Vault) -> None:
    """Two different destinations: each stream is masked on its own and keeps its own bytes."""
    out, err = io.BytesIO(), io.BytesIO()
    run_masked(["bash", "-c", "echo out; echo err >&2"], redactor=masking_redactor({SECRET: "t"}), stdout=out,
               stderr=err)
    assert (out.getvalue(), err.getvalue()) == (b"out\n", b"err\n")


def _files(tmp_path: Path) -> dict[str, tuple[object, object, bool]]:
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    primary, secondary = pty.openpty()
    tty_name = os.ttyname(secondary)
    log = tmp_path / "a.log"
    other = tmp_path / "b.log"
    shared = io.BytesIO()
    return {
        "same object": (shared, shared, True),
        "two buffers": (io.BytesIO(), io.BytesIO(), False),
        "one pipe, two fds": (open(w1, "wb", closefd=False), open(os.dup(w1), "wb"), True),
        "two pipes": (open(w1, "wb", closefd=False), open(w2, "wb", closefd=False), False),
        "one file opened twice": (open(log, "wb"), open(log, "ab"), True),
        "two files": (open(log, "ab"), open(other, "wb"), False),
        "one tty opened twice": (open(secondary, "wb", closefd=False), open(tty_name, "wb"), True),
        "tty and pipe": (open(secondary, "wb", closefd=False), open(w2, "wb", closefd=False), False),
        "dev-null twice": (open(os.devnull, "wb"), open(os.devnull, "wb"), True),
        "_keep": (r1, r2, primary),
    }


def test_same_place_table(tmp_path: Path) -> None:
    table = _files(tmp_path)
    table.pop("_keep")
    for name, (a, b, expected) in table.items():
        assert same_place(a, b) is expected, name  # type: ignore[arg-type]


def test_muninn_is_not_dumpable_once_it_runs_a_child(vault: Vault) -> None:
    """Non-dumpable: another process of the same (non-root) user cannot open /proc/<muninn>/fd/1 (our
    terminal) or read /proc/<muninn>/mem (decrypted values). Checked in a fresh process: PR_GET_DUMPABLE."""
    code = ("import ctypes, io, sys\n"
            "from muninn.plugins.access.runner import run_masked\n"
            "from muninn.guards.redact.mask import masking_redactor\n"
            "prctl = ctypes.CDLL(None).prctl\n"
            "before = prctl(3, 0, 0, 0, 0)\n"
            "run_masked(['true'], redactor=masking_redactor({}), stdout=io.BytesIO(), stderr=io.BytesIO())\n"
            "print(before, prctl(3, 0, 0, 0, 0))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["1", "0"], done.stderr


# --- the value as a shell prints it back (the shared forms table, guards/known/forms.py) -----------------

ODD = "Zq7#kP2x $a'b\"c d!"
SHELL_PRINTS = [
    'printf "%q\\n" "$V"', "declare -p V", "typeset -p V", "export -p | grep ' V='", 'echo "${V@Q}"',
    "set | grep '^V='", "env | grep '^V='", 'printf "%s" "$V" | base64',
    f"{shlex.quote(sys.executable)} -c 'import os, shlex; print(shlex.quote(os.environ[\"V\"]))'",
    f"{shlex.quote(sys.executable)} -c 'import os, json; print(json.dumps(os.environ[\"V\"]))'",
]


@pytest.mark.parametrize("value", [SECRET, ODD], ids=["plain", "shell-special"])
@pytest.mark.parametrize("prints", SHELL_PRINTS)
def test_shell_printed_forms_are_masked(value: str, prints: str) -> None:
    out = io.BytesIO()
    run_masked(["bash", "-c", f"export V; {prints}; echo END"], redactor=masking_redactor({value: "odd"}),
               stdout=out, stderr=out, env={**os.environ, "V": value})
    text = out.getvalue().decode()
    assert "END" in text and "[REDACTED:odd]" in text, text
    assert value not in text and value[:9] not in text, text


# --- signals: the child has its own session, so muninn passes the ones meant for it on -----------

def _as_at_a_terminal() -> None:
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


@pytest.mark.parametrize("sig", ["TERM", "HUP", "INT"])
def test_signals_to_muninn_reach_the_child(vault: Vault, tmp_path: Path, sig: str) -> None:
    # Readiness through a file: the masker holds back a short "ready" line until more output comes.
    ready = tmp_path / "ready"
    child = f'trap "echo got-{sig}; exit 3" {sig}; touch {shlex.quote(str(ready))}; sleep 30'
    proc = subprocess.Popen(["bash", "-c", f"exec {MUNINN} secret exec term-token -- bash -c {shlex.quote(child)}"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=_env(vault),
                            # As at a terminal: a test runner started in the background ignores SIGINT
                            # (and under nohup SIGHUP), and an ignored signal stays ignored in every
                            # process it starts: a shell cannot even trap it.
                            preexec_fn=_as_at_a_terminal)
    deadline = time.monotonic() + 60
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ready.exists()
    time.sleep(0.2)  # muninn sets its handlers right after starting the child
    proc.send_signal(getattr(signal, f"SIG{sig}"))
    started = time.monotonic()
    rest, _ = proc.communicate(timeout=30)
    assert proc.returncode == 3 and f"got-{sig}".encode() in rest, rest
    assert time.monotonic() - started < 10  # the child ended on the signal, not when its sleep ran out
