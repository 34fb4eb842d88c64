"""What each access step is, and the one shell script that runs them.

An access step is a line the owner wrote for a human. `access exec` and the verify sweep run
only the steps that set up the shell (`source`, `export`, `cd`, machine-wide switches such as `az
account set`) and then the command; steps that are themselves commands (`ssh jump01`, `kubectl
get nodes`) are shown, not run, and prose (`sudo on any VM: ...`) is a note. `kubectl config
use-context` is dropped and a kubectl command gets `--context` instead: the switch rewrites the
kubeconfig every shell shares, and parallel verify runs collided on its lock.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

StepKind = Literal["env", "switch", "command", "note"]

_ENV = {"source", ".", "export", "unset", "cd", "set", "ulimit", "umask", "alias"}
_NOTE = re.compile(r"^[A-Za-z][\w /'()-]{0,60}:\s")


@dataclass(frozen=True)
class Step:
    text: str
    kind: StepKind
    context: str | None = None  # for a kubectl context switch: the context it selects


def classify(text: str) -> Step:
    text = text.strip()
    if _NOTE.match(text) and not re.match(r"^\w+://", text):
        return Step(text, "note")
    try:
        words = shlex.split(text)
    except ValueError:
        return Step(text, "note")
    if not words:
        return Step(text, "note")
    if words[0] in _ENV or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        return Step(text, "env")
    if words[:3] == ["kubectl", "config", "use-context"] and len(words) >= 4:
        return Step(text, "switch", context=words[3])
    if words[:3] in (["az", "account", "set"], ["gcloud", "config", "set"]) or words[:2] == ["kubectx", words[-1]]:
        return Step(text, "switch")
    return Step(text, "command")


def classify_all(steps: Sequence[str]) -> list[Step]:
    return [classify(s) for s in steps]


# Switch steps that change machine-wide state with no per-command flag to replace them.
def is_global_switch(step: Step) -> bool:
    return step.kind == "switch" and step.context is None


def with_context(command: str, context: str | None) -> str:
    """Add `--context CTX` to a kubectl command that has none (the replacement for a dropped switch)."""
    if not context:
        return command
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if words[:1] != ["kubectl"] or any(w == "--context" or w.startswith("--context=") for w in words):
        return command
    return shlex.join(["kubectl", "--context", context, *words[1:]])


def script(steps: Sequence[Step], command: str, *, drop_kube_switch: bool = False) -> str:
    """One bash script: each setup step must succeed (else its exit code and a line saying which), then the command.

    The command is the last line, so the script's exit code is the command's.
    """
    lines: list[str] = []
    for n, step in enumerate(steps, start=1):
        if step.kind not in ("env", "switch") or (drop_kube_switch and step.context):
            continue
        lines.append(guarded(n, step.text, step.text))
    lines.append(command)
    return "\n".join(lines)


def guarded(n: int, line: str, text: str) -> str:
    """`line` for bash: on failure its exit code, and a line on stderr naming step `n` as the owner wrote it."""
    said = shlex.quote(f"muninn: access step {n} failed: {text}")
    return f"{line} || {{ rc=$?; echo {said} >&2; exit $rc; }}"


def kube_context(steps: Sequence[Step]) -> str | None:
    contexts = [s.context for s in steps if s.context]
    return contexts[-1] if contexts else None
