"""The `muninn observe` hook as Claude Code runs it: one fresh process per tool call, a PostToolUse payload
on stdin. A workspace made by `muninn init` in a temporary HOME, with VALUES secrets sealed in the vault
by `muninn secret load` (they stay in secrets.yaml too); the calls run back to back and the median of
wall-clock time per call is printed with the load average.

    python -m muninn.evals.lab.bench_observe [--values 50] [--calls 20] [--home DIR]

`--home` reuses (or keeps) a workspace, so two versions of muninn are measured on the same one. Needs no
server; writes nothing into the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PAYLOAD = {"session_id": "bench-session", "cwd": "/home/me/src/infra", "hook_event_name": "PostToolUse",
           "tool_name": "Bash", "tool_input": {"command": "kubectl get pods -n ingress"},
           "tool_response": {"stdout": "NAME READY STATUS\ningress-7d9 1/1 Running\n" * 20, "stderr": ""},
           "tool_use_id": "toolu_bench"}


def workspace(home: Path, values: int) -> dict[str, str]:
    env = {"HOME": str(home), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "LANG": "C.UTF-8",
           "PYTHON_KEYRING_BACKEND": "keyrings.alt.file.PlaintextKeyring"}
    if not (home / ".config" / "muninn" / "muninn.yaml").exists():
        (home / "notes").mkdir(parents=True, exist_ok=True)
        (home / "notes" / "a.md").write_text("# A\n\nA note.\n")
        subprocess.run([sys.executable, "-m", "muninn", "init", "--notes", str(home / "notes"), "--yes"],
                       env=env, check=True, capture_output=True)
        # One `secret load` of entries with values, not VALUES `secret add` runs (seconds each): the values
        # then sit in the vault store and in secrets.yaml (0600), and the hook reads both.
        with (home / ".config" / "muninn" / "secrets.yaml").open("a") as fh:
            for i in range(values):
                fh.write(f"- {{id: bench-{i}, service: bench, value: {secrets.token_urlsafe(24)!r}}}\n")
        subprocess.run([sys.executable, "-m", "muninn", "vault", "sync"], env=env, check=True, capture_output=True)
    return env


def calls(env: dict[str, str], n: int) -> list[float]:
    data = json.dumps(PAYLOAD)
    out = []
    for _ in range(n):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "muninn", "observe", "-v"], env=env, input=data, text=True,
                              capture_output=True)
        out.append(time.perf_counter() - start)
        if "recorded" not in done.stderr or "withheld" in done.stderr:
            raise SystemExit(f"the hook did not record a redacted line: {done.stderr.strip()}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--values", type=int, default=50)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--home", type=Path)
    args = ap.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="muninn-observe-"))
    env = workspace(home, args.values)
    times = calls(env, args.calls)
    print(f"| {args.values} vault values | {args.calls} calls | median {statistics.median(times):.2f} s | "
          f"min {min(times):.2f} s | max {max(times):.2f} s | load {os.getloadavg()[0]:.1f} |")


if __name__ == "__main__":
    main()
