"""Measure the verify guard: refusals per class, false refusals on real proofs, bash agreement, speed.

Run: `.venv/bin/python -m muninn.evals.lab.security_guard` (writes evals/results/security_guard.md).
With `bashlex` importable (`pip install bashlex`), its splitter is measured against muninn's own
tokenizer on the same cases, with bash itself as the oracle:
- bash runs each case inside the read-only sandbox with nothing on PATH, in a directory whose file
  names match the globs, with the injected variables set to values holding spaces and globs. A
  DEBUG trap records every simple command bash starts; the tool is a function printing its argv.
- a splitter is right on a case when it refuses it, or when bash ran exactly that one command with
  exactly those words, and nothing else (no second command, no error, no substitution).
"""

from __future__ import annotations

import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from muninn.evals import lab
from muninn.evals.lab.guard_cases import ALLOWED_PROOFS, INJECTED, REFUSED, generated
from muninn.evals.lab.guard_cases_output import (
    method_override,
    method_plain,
    output_shaping_plain,
    output_shaping_secret,
)
from muninn.guards.command import guard as command_guard
from muninn.guards.command.shell_words import ShellRefusal, split
from muninn.plugins.access import sandbox

VALUES = {"JIRA_API_TOKEN": "t -o /tmp/x *", "GRAFANA_USER": "u ser", "GRAFANA_PASSWORD": "p*w"}
Splitter = Callable[[str], "list[str] | None"]


def own_words(command: str) -> list[str] | None:
    """muninn's tokenizer plus the guard's rule for the command word (no VAR=value, no $VARIABLE there)."""
    try:
        words = split(command, variables=INJECTED)
    except ShellRefusal:
        return None
    if words[0].tainted or re.match(r"[A-Za-z_][A-Za-z0-9_]*=", words[0].text):
        return None
    return [_substitute(w.text) if w.tainted else w.text for w in words]


def _substitute(text: str) -> str:
    for name, value in VALUES.items():
        text = text.replace(f"${name}", value)
    return text


def bashlex_words(command: str) -> list[str] | None:
    """bashlex's words when it sees one plain command; None (a refusal) for anything else it reports."""
    import bashlex  # measured only: muninn does not depend on it

    try:
        nodes = bashlex.parse(command)
    except Exception:  # bashlex raises its own errors and assertion errors on odd input: a refusal
        return None
    if len(nodes) != 1 or nodes[0].kind != "command":
        return None
    words = []
    for part in nodes[0].parts:
        if part.kind != "word":
            return None
        subs = getattr(part, "parts", [])
        if any(s.kind != "parameter" or s.value not in INJECTED for s in subs):
            return None
        words.append(_substitute(part.word))
    return words


def bash_runs(command: str, tool: str, globdir: Path) -> tuple[list[str], list[list[str]], str]:
    """(commands bash started, argv of each call of `tool`, stderr), in the sandbox, nothing on PATH."""
    script = (f'function {tool} {{ printf "\\1"; for a in "$@"; do printf "%s\\0" "$a"; done; }}\n'
              "trap 'printf \"\\2%s\\n\" \"$BASH_COMMAND\"' DEBUG\n" + command + "\n")
    env = {"PATH": str(globdir / "empty"), "HOME": str(Path.home()), **VALUES}
    done = subprocess.run(sandbox.wrap(script), capture_output=True, env=env, cwd=globdir, timeout=10, check=False)
    out = done.stdout.decode(errors="replace")
    started = [line for line in out.split("\2")[1:]]
    calls = [chunk.split("\2")[0].split("\0")[:-1] for chunk in out.split("\1")[1:]]
    return started, calls, done.stderr.decode(errors="replace")


def right(words: list[str] | None, command: str, globdir: Path) -> bool:
    if words is None:
        return True
    if "\0" in command:   # no process can be given it: accepting it is already wrong
        return False
    if not words or not re.fullmatch(r"[A-Za-z0-9_./-]+", words[0]):
        return False
    started, calls, err = bash_runs(command, words[0], globdir)
    return len(started) == 1 and calls == [words[1:]] and not err.strip()


def _timed(fn: Callable[[str], object], commands: list[str], rounds: int = 20) -> float:
    """µs per command, median of `rounds` passes over all commands."""
    per = []
    for _ in range(rounds):
        started = time.perf_counter()
        for command in commands:
            fn(command)
        per.append((time.perf_counter() - started) / len(commands) * 1e6)
    return statistics.median(per)


def _sandbox_ms(argv_for: Callable[[str], list[str]], n: int = 15) -> float:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        subprocess.run(argv_for("true"), check=True)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _splitters() -> dict[str, Splitter]:
    out: dict[str, Splitter] = {"muninn shell_words + command-word rule": own_words}
    try:
        import bashlex  # noqa: F401
    except ImportError:
        print("bashlex is not installed: measuring muninn's tokenizer only", file=sys.stderr)
    else:
        out["bashlex 0.18 (one plain command)"] = bashlex_words
    return out


def main(out: Path = lab.RESULTS / "security_guard.md") -> str:
    lines = ["# Verify command guard: refusals by class, false refusals, bash agreement", "",
             f"vm · {platform.machine()} · Python {platform.python_version()} · "
             f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC · sandbox: {sandbox.available() or 'none'}", "",
             "Cases: `evals/lab/guard_cases.py` (tests: `tests/test_command_guard_classes.py`). Each case judged with "
             f"the entry's variables {', '.join(INJECTED)}. Run: `.venv/bin/python -m muninn.evals.lab.security_guard` "
             "(bashlex is compared when importable). The tables were written with the rules, by the same author: "
             "an outside check's own table is the real measure of misses and false refusals.", "",
             "| class | cases | refused | allowed (misses) |", "| --- | --- | --- | --- |"]
    misses: list[str] = []
    for cls, cases in REFUSED.items():
        verdicts = [command_guard.check(c, INJECTED) for c in cases]
        missed = [c for c, v in zip(cases, verdicts, strict=True) if v.allowed]
        misses += missed
        lines.append(f"| {cls} | {len(cases)} | {len(cases) - len(missed)} | {len(missed)} |")
    total = sum(len(c) for c in REFUSED.values())
    lines.append(f"| **all adversarial** | **{total}** | **{total - len(misses)}** | **{len(misses)}** |")
    lines += ["", "Generated from the specs themselves (`generated()`), every tool and verb:", "",
              "| generated class | cases | refused | allowed (misses) |", "| --- | --- | --- | --- |"]
    for cls, cases in generated(command_guard.TOOLS).items():
        missed = [c for c, _ in cases if command_guard.check(c, INJECTED).allowed]
        misses += missed
        lines.append(f"| {cls} | {len(cases)} | {len(cases) - len(missed)} | {len(missed)} |")
    lines += ["", "Two generated classes of their own (`evals/lab/guard_cases_output.py`, tests: "
              "`tests/test_command_guard_output.py`), each beside the ordinary cases of the same shapes:", "",
              "| generated class | cases | refused | allowed (misses) | ordinary cases | false refusals |",
              "| --- | --- | --- | --- | --- | --- |"]
    for cls, bad, plain in (("output-shaping option selecting a secret-ish field (gcloud --format/--filter, "
                             "kubectl -o jsonpath/custom-columns, aws/az --query)", output_shaping_secret(),
                             output_shaping_plain()),
                            ("method override (X-HTTP-Method-Override and kin, `_method=`; curl, wget, httpie, xh)",
                             method_override(), method_plain())):
        missed = [c for c in bad if command_guard.check(c, INJECTED).allowed]
        misses += missed
        wrong = sum(not command_guard.check(c, INJECTED).allowed for c in plain)
        lines.append(f"| {cls} | {len(bad)} | {len(bad) - len(missed)} | {len(missed)} | {len(plain)} | {wrong} |")
    false = [(c, command_guard.check(c, INJECTED).reason) for c in ALLOWED_PROOFS
             if not command_guard.check(c, INJECTED).allowed]
    lines += ["", f"False refusals on {len(ALLOWED_PROOFS)} real read-only proof commands: **{len(false)}**"
              + "".join(f"\n- `{c}`: {r}" for c, r in false), ""]
    # Bash as the oracle, for both splitters.
    shell_cases = REFUSED["word splitting and comments"] + REFUSED["variables and expansion"]
    with tempfile.TemporaryDirectory() as tmp:
        globdir = Path(tmp)
        (globdir / "empty").mkdir()
        for name in ("pods", "pod1", "po", "p", "x"):
            (globdir / name).write_text("")
        lines += ["## Tokenizer: muninn's own against bashlex, bash as the oracle", "",
                  "Right = refused, or exactly the one command bash ran, with its words. Speed: µs per command "
                  f"over all {total + len(ALLOWED_PROOFS)} cases (median of 20 passes).", "",
                  f"| splitter | right on {len(shell_cases)} shell-syntax cases | right on {len(ALLOWED_PROOFS)} "
                  "real proofs (words = bash's) | proofs it refuses | µs / command |",
                  "| --- | --- | --- | --- | --- |"]
        every = [c for cs in REFUSED.values() for c in cs] + ALLOWED_PROOFS
        speed: dict[str, float] = {}
        for label, fn in _splitters().items():
            shell_right = sum(right(fn(c), c, globdir) for c in shell_cases)
            proof_words = [fn(c) for c in ALLOWED_PROOFS]
            proof_right = sum(w is not None and right(w, c, globdir) for w, c in zip(proof_words, ALLOWED_PROOFS,
                                                                                       strict=True))
            refused = sum(w is None for w in proof_words)
            speed[label] = _timed(fn, every)
            lines.append(f"| {label} | {shell_right} | {proof_right} | {refused} | {speed[label]:.1f} |")
        lines += ["", "Chosen: muninn's own tokenizer (`guards/command/shell_words.py`). Used as a splitter, "
                  "bashlex parses bash's grammar (it sees `#`, `;`, `$(...)`) but returns words where bash would glob, "
                  "brace-expand, split an unquoted variable or expand `~`: those rules would still be ours to add"
                  + (f", at {max(speed.values()) / min(speed.values()):.0f}x the time per command." if len(speed) > 1
                     else "."), ""]
        for label, fn in _splitters().items():
            wrong = [c for c in shell_cases + ALLOWED_PROOFS if not right(fn(c), c, globdir)
                     or (c in ALLOWED_PROOFS and fn(c) is None)]
            lines.append(f"- {label} gets wrong: " + (", ".join(f"`{c!r}`" for c in wrong) if wrong else "none"))
        lines.append("")
    check_us = _timed(lambda c: command_guard.check(c, INJECTED), every, rounds=10)
    lines += ["## Cost", "", "Two cores shared with other jobs: absolute times moved several-fold between runs of this "
              "script (guard verdict 23 to 180 µs, `bash -c true` 3 to 16 ms); the ratios held.", "",
              "| measure | value |", "| --- | --- |",
              f"| guard verdict (split + rules), µs per command, all cases | {check_us:.1f} |",
              f"| `bash -c true`, ms (median of 15) | {_sandbox_ms(lambda s: ['bash', '-c', s]):.1f} |"]
    for kind in sandbox.working():
        mark = " (in use)" if kind == sandbox.available() else ""
        lines.append(f"| same inside {kind}{mark}, ms | {_sandbox_ms(lambda c, k=kind: sandbox.wrap(c, k)):.1f} |")
    if misses:
        lines += ["", "Misses:", *(f"- `{c!r}`" for c in misses)]
    text = "\n".join(lines) + "\n"
    out.write_text(text)
    return text


if __name__ == "__main__":
    print(main())
