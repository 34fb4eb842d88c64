"""What the PreToolUse hook (plugins/mcp/risky_hook.py) adds to a Bash call: the wall time of the hook process,
fed the payloads Claude Code sends, for harmless and for risky commands.

    python -m muninn.evals.lab.bench_risky_hook [--runs 200] [--stack] [--write]

Harmless: the ordinary commands of risky_cases.py, each run as the installed hook line runs it (`python -S
risky_hook.py --profile assistant`), interleaved with a bare `python -S -c pass` (the interpreter's own
start, which no Python hook can go under) so a loaded machine shows in both. --stack adds the risky kind:
its own stack on free ports with the demo workspace (examples/: its policy's assistant reader, its
observation log, one `muninn nightly`), the hook line exactly as `mcp install` writes it, the reader's warm
search process started by a first risky call, then each risky command of risky_cases.py and the demo's
`git push origin main` (a past 403 is in the log). --write puts the table in
evals/results/recall_before_risky.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from muninn.evals.benchutil import pct
from muninn.evals.lab.risky_cases import ORDINARY, RISKY
from muninn.plugins.mcp import client_install, risky_hook

ROOT = Path(__file__).resolve().parents[2]
RESULT = ROOT / "evals" / "results" / "recall_before_risky.md"


def payload(command: str) -> bytes:
    """A PreToolUse payload as Claude Code sends it."""
    return json.dumps({"session_id": "9c3f0e1a-5b7d-4c2e-8f10-aa11bb22cc33", "transcript_path": "/h/.claude/t.jsonl",
                       "cwd": "/home/me/src/infra", "permission_mode": "default", "hook_event_name": "PreToolUse",
                       "tool_name": "Bash", "tool_input": {"command": command, "description": "run"},
                       "tool_use_id": "toolu_01A09q90qw90lq917835lq9"}).encode()


def _time(args: list[str], data: bytes, env: dict[str, str] | None = None) -> tuple[float, bytes]:
    t = time.perf_counter()
    done = subprocess.run(args, input=data, capture_output=True, env=env, timeout=120)
    return (time.perf_counter() - t) * 1000, done.stdout


def _row(name: str, ms: list[float]) -> str:
    return f"| {name} | {len(ms)} | {statistics.median(ms):.1f} | {pct(ms, 0.95):.1f} | {max(ms):.1f} |"


def harmless(runs: int) -> list[str]:
    client_install.precompile()   # as `mcp install` leaves it
    hook = [sys.executable, "-S", risky_hook.__file__, "--profile", "assistant"]
    rng = random.Random(7)
    hooked, bare = [], []
    for _ in range(runs):
        ms, out = _time(hook, payload(rng.choice(ORDINARY)))
        assert out == b"", out
        hooked.append(ms)
        bare.append(_time([sys.executable, "-S", "-c", "pass"], b"")[0])
    gained = [h - b for h, b in zip(hooked, bare, strict=True)]
    return [_row("harmless command: the hook process", hooked), _row("bare `python -S -c pass` (interleaved)", bare),
            _row("harmless: hook minus bare, pairwise", gained)]


def risky(runs: int) -> tuple[list[str], str]:
    from muninn.core import config, paths
    from muninn.core import policy as policy_mod
    from muninn.core.client import OpenViking
    from muninn.evals.lab import bench_nightly
    from muninn.plugins.mcp import rules
    from muninn.plugins.search import reader_index, serve
    from muninn.plugins.stack import lifecycle, policy_apply

    tmp = Path(tempfile.mkdtemp(prefix="muninn-bench-risky-"))
    # The server's venv and the models where they are (building a venv takes minutes), the keys apart.
    os.environ.setdefault("MUNINN_SERVER_VENV", str(paths.server_venv()))
    os.environ.setdefault("MUNINN_MODELS", str(paths.models_dir()))
    os.environ["XDG_DATA_HOME"] = str(tmp / "xdg")
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyrings.alt.file.PlaintextKeyring"
    cfg = bench_nightly._workspace(tmp)
    settings = config.load(cfg)
    lifecycle.up(settings, say=lambda m: None, config_file=cfg)
    try:
        pol = policy_mod.load_for(settings)
        assert policy_apply.apply(settings, pol, say=lambda m: None).ok
        bench_nightly._night(cfg)
        reader = pol.profile("assistant")
        with OpenViking.user(settings, reader.account, reader.user) as client:
            reader_index.refresh_quietly(settings, reader, client)
        env = rules.server_env(cfg, settings.keyring.backend)
        line = client_install.risky_line(env, sys.executable, "assistant", None)
        shell_env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"),
                     "XDG_DATA_HOME": os.environ["XDG_DATA_HOME"]}
        first = "git push origin main"
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 300:   # the first risky call starts the reader's warm process
            _, out = _time(["sh", "-c", line], payload(first), shell_env)
            if out:
                break
            time.sleep(1)
        warm_s = time.perf_counter() - t0
        rng = random.Random(11)
        ms, found = [], 0
        for i in range(runs):
            command = first if i % 5 == 0 else rng.choice(RISKY)
            spent, out = _time(["sh", "-c", line], payload(command), shell_env)
            ms.append(spent)
            found += bool(out)
        harmless_sh = [_time(["sh", "-c", line], payload(rng.choice(ORDINARY)), shell_env)[0] for _ in range(runs)]
        serve.stop(settings, reader)
    finally:
        lifecycle.down(settings, say=lambda m: None)
    note = (f"The reader's warm process answered {warm_s:.0f} s after the first risky call started it; "
            f"{found} of {runs} risky calls handed the agent a past record (every fifth is `{first}`, which the "
            "demo log holds; the others mostly have none, and cost the same search).")
    return [_row("risky command: the hook line through `sh -c`, warm", ms),
            _row("harmless command: the same line through `sh -c`", harmless_sh)], note


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--stack", action="store_true", help="also time risky commands against a stack of its own")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    load = os.getloadavg()
    rows = harmless(args.runs)
    note = ""
    if args.stack:
        more, note = risky(max(args.runs // 5, 20))
        rows += more
    text = (f"# Recall before a risky command: what the PreToolUse hook costs\n\n"
            f"`python -m muninn.evals.lab.bench_risky_hook --runs {args.runs}{' --stack' if args.stack else ''}"
            f"{' --write' if args.write else ''}`, {os.cpu_count()} cores, load average {load[0]:.2f} at the start and "
            f"{os.getloadavg()[0]:.2f} at the end (the machine is shared). Wall time of the hook process fed "
            "Claude Code's PreToolUse payload, in ms.\n\n| | runs | median | p95 | max |\n| --- | ---: | ---: | ---: "
            "| ---: |\n" + "\n".join(rows) + "\n\n" + (note + "\n\n" if note else "") +
            "A harmless command costs an interpreter start without site-packages, `json` and the classifier's "
            "bytecode (written by `mcp install`), and no muninn import; the pairwise difference to a bare "
            "`python -S` is what the hook itself adds. A risky one loads muninn's settings, policy and "
            "redactor and asks the reader's warm `muninn serve` with a hard budget of "
            f"{risky_hook.BUDGET_S:g} s for the search (no warm process: nothing this time, one is started).\n")
    if args.write:
        RESULT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
