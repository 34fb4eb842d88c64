"""Run a child with secrets injected and every byte of its output masked before it reaches us.

Used by `secret exec`, `access exec` and the verify sweep. The child's stdout and stderr are
pipes; one thread per pipe reads whatever arrives (`os.read`, no line buffering, so a value
printed without a newline is still masked at EOF) and writes the masked bytes on.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import BinaryIO

from muninn.core.errors import ExitCode, MuninnError
from muninn.guards.mask import StreamMasker
from muninn.guards.redact import Redactor

CHUNK = 65536


class CommandNotFound(MuninnError):
    exit_code = ExitCode.COMMAND_NOT_FOUND


@dataclass
class RunResult:
    exit_code: int
    timed_out: bool = False
    hits: list[str] = field(default_factory=list)


def _pump(src: BinaryIO, dst: BinaryIO, masker: StreamMasker) -> None:
    fd = src.fileno()
    try:
        while True:
            data = os.read(fd, CHUNK)
            if not data:
                break
            out = masker.feed(data)
            if out:
                dst.write(out)
                dst.flush()
        tail = masker.flush()
        if tail:
            dst.write(tail)
        dst.flush()
    except BrokenPipeError:
        # Our reader went away (`... | head -1`): closing the child's pipe hands it the same SIGPIPE,
        # instead of leaving it blocked on a full pipe nobody reads.
        pass
    finally:
        src.close()


def run_masked(
    command: Sequence[str] | str,
    *,
    redactor: Redactor,
    stdout: BinaryIO,
    stderr: BinaryIO,
    env: Mapping[str, str] | None = None,
    stdin_data: bytes | None = None,
    timeout: float | None = None,
) -> RunResult:
    """Run `command` (argv, or one string for bash -c), masking both streams. Keeps the exit code.

    With a timeout the child gets its own process group, so a shell's children die with it.
    """
    argv = ["bash", "-c", command] if isinstance(command, str) else list(command)
    try:
        proc = subprocess.Popen(
            argv, env=dict(env) if env is not None else None,
            stdin=subprocess.PIPE if stdin_data is not None else None,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=timeout is not None)
    except FileNotFoundError:
        raise CommandNotFound(f"command not found: {argv[0]}", fix="check the name and PATH") from None
    except PermissionError:
        raise CommandNotFound(f"command is not executable: {argv[0]}", fix="check its mode") from None
    maskers = [StreamMasker(redactor), StreamMasker(redactor)]
    pumps = [threading.Thread(target=_pump, args=(proc.stdout, stdout, maskers[0]), daemon=True),
             threading.Thread(target=_pump, args=(proc.stderr, stderr, maskers[1]), daemon=True)]
    for pump in pumps:
        pump.start()
    if stdin_data is not None:
        assert proc.stdin is not None
        try:
            proc.stdin.write(stdin_data)
            proc.stdin.close()
        except BrokenPipeError:
            pass  # the child did not read its stdin; its exit code tells the story
    timed_out = False
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        code = proc.wait()
    except KeyboardInterrupt:
        # Ctrl-C: without a timeout the child shares our process group and got the same SIGINT;
        # with one it has its own group, so pass it on. Either way its exit code is the answer.
        if timeout is not None:
            os.killpg(proc.pid, signal.SIGINT)
        code = proc.wait()
    for pump in pumps:
        pump.join()
    if code < 0:
        code = 128 - code  # killed by a signal: report it the way a shell does
    return RunResult(code, timed_out, maskers[0].hits + maskers[1].hits)
