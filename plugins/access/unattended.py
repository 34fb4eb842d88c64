"""The setup steps a read nobody watches may take (the known-values refresh at export and nightly).

`access exec` runs an entry's setup lines in bash as the owner wrote them: the owner is there. At
export and at night nobody is, and a line there would run at every `export all`: `kubectx prod-admin`
or `gcloud config set project prod` would change the owner's global kubectl/gcloud/az state, and
`source x; touch y` counts as an env step. So here a setup line is parsed (`steps.classify`, then
shlex) and only these shapes are taken, rebuilt from their words, never run as written:

    export NAME=value ... | NAME=value ... | unset NAME ... | cd DIR | source FILE | . FILE

A value may use `$NAME`, `${NAME}` and a leading `~` (expanded whatever its quoting). A line with `;`,
`&`, `|`, `<`, `>`, a backtick, `$(` or a newline, a global switch (`az account set`, `gcloud config
set`, `kubectx`) or any other setup step is refused: the caller skips that entry and names the line.
`kubectl config use-context` is dropped (the reader passes `--context=`), commands and notes are
not run, as in `access exec`. Without a `source` step no shell runs at all: the environment is
built here and kubectl started directly; with one, bash runs the rebuilt lines (the sourced file is
the owner's own).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import steps

_UNSAFE = re.compile(r"[;&|<>`\n\r]|\$\(")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.DOTALL)
_REF = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
FIX = ("run that step in your shell before `muninn export`, and keep it in the entry's `notes:` instead of "
       "`access:`; or set `known_values.kubernetes: false`")


@dataclass(frozen=True)
class Refused:
    n: int        # the step's number in `access:`, from 1
    text: str
    why: str


@dataclass(frozen=True)
class _Action:
    n: int
    text: str
    verb: str                 # export, assign, unset, cd, source
    args: tuple[str, ...]     # NAME=value words, names, or one path


@dataclass
class Setup:
    actions: list[_Action] = field(default_factory=list)

    @property
    def needs_shell(self) -> bool:
        return any(a.verb == "source" for a in self.actions)

    def environment(self, base: Mapping[str, str]) -> tuple[dict[str, str], Path | None, Refused | None]:
        """(the child's environment, its working folder, the step that failed) without any shell:
        bash's own rules for exported and plain variables."""
        values, exported = dict(base), set(base)
        cwd: Path | None = None
        for a in self.actions:
            if a.verb in ("export", "assign"):
                for word in a.args:
                    m = _ASSIGN.fullmatch(word)
                    if m:
                        values[m.group(1)] = _expand(m.group(2), values)
                    if a.verb == "export":
                        exported.add(m.group(1) if m else word)
            elif a.verb == "unset":
                for name in a.args:
                    values.pop(name, None)
                    exported.discard(name)
            elif a.verb == "cd":
                target = Path(_expand(a.args[0] if a.args else "~", values))
                target = target if target.is_absolute() else (cwd or Path.cwd()) / target
                if not target.is_dir():
                    return {}, None, Refused(a.n, a.text, "no such folder")
                cwd = target
        return {k: values[k] for k in exported if k in values}, cwd, None

    def script(self, command: str) -> str:
        """The rebuilt lines for bash, each guarded as `access exec` guards its steps, then `command`."""
        lines = []
        for a in self.actions:
            if a.verb in ("export", "assign"):
                words = [_render_assignment(w) for w in a.args]
                line = ("export " if a.verb == "export" else "") + " ".join(words)
            elif a.verb == "unset":
                line = "unset " + " ".join(a.args)
            else:
                line = ("cd " if a.verb == "cd" else "source ") + _render(a.args[0] if a.args else "~")
            lines.append(steps.guarded(a.n, line, a.text))
        return "\n".join([*lines, command])


def plan(access: Sequence[str]) -> Setup | Refused:
    """The entry's setup as actions, or the first step that may not run unattended."""
    setup = Setup()
    for n, step in enumerate(steps.classify_all(access), start=1):
        if step.kind in ("command", "note") or (step.kind == "switch" and step.context):
            continue
        if step.kind == "switch":
            return Refused(n, step.text, "it switches machine-wide state")
        if _UNSAFE.search(step.text):
            return Refused(n, step.text, "it is more than one plain command (`;`, `&`, `|`, a redirection, "
                                         "`$(`, a backtick or a newline)")
        action = _action(n, step.text, shlex.split(step.text))
        if isinstance(action, Refused):
            return action
        setup.actions.append(action)
    return setup


def _action(n: int, text: str, words: list[str]) -> _Action | Refused:
    verb, args = words[0], words[1:]
    if verb == "export" and args and all(_ASSIGN.fullmatch(w) or _NAME.fullmatch(w) for w in args):
        return _Action(n, text, "export", tuple(args))
    if _ASSIGN.fullmatch(verb) and all(_ASSIGN.fullmatch(w) for w in args):
        return _Action(n, text, "assign", tuple(words))
    if verb == "unset" and args and all(_NAME.fullmatch(w) for w in args):
        return _Action(n, text, "unset", tuple(args))
    if verb == "cd" and len(args) <= 1 and not any(a.startswith("-") for a in args):
        return _Action(n, text, "cd", tuple(args))
    if verb in ("source", ".") and len(args) == 1 and not args[0].startswith("-"):
        return _Action(n, text, "source", tuple(args))
    return Refused(n, text, "only `export NAME=value`, `NAME=value`, `unset NAME`, `cd DIR` and `source FILE` "
                            "run unattended")


def _expand(value: str, env: Mapping[str, str]) -> str:
    value = os.path.expanduser(value) if value.startswith("~") else value
    return _REF.sub(lambda m: env.get(m.group(1) or m.group(2), ""), value)


def _render(value: str) -> str:
    """`value` as one bash word: its literal text quoted, its `$NAME` references left to bash."""
    value = os.path.expanduser(value) if value.startswith("~") else value
    out, at = [], 0
    for m in _REF.finditer(value):
        if m.start() > at:
            out.append(shlex.quote(value[at:m.start()]))
        out.append(f'"${{{m.group(1) or m.group(2)}}}"')
        at = m.end()
    if at < len(value) or not out:
        out.append(shlex.quote(value[at:]))
    return "".join(out)


def _render_assignment(word: str) -> str:
    m = _ASSIGN.fullmatch(word)
    return f"{m.group(1)}={_render(m.group(2))}" if m else word
