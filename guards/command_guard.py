"""The syntactic read-only guard in front of every command `muninn verify` runs.

It is a filter against copy-paste accidents, not a sandbox: it reads the command line the way
a shell would split it (shlex), refuses anything a shell would chain, redirect or substitute,
refuses known write verbs by name (the deny-list, so the reason names what it would have
written), and then lets through only what a per-tool allow-list knows to be read-only. A tool
without a rule is refused. A check that crashes is a refusal too.

Variables are the one shell feature allowed (`$NAME`, `${NAME}`): proof commands carry the
injected secret that way, e.g. `curl -H "Authorization: Bearer $JIRA_API_TOKEN" URL`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from muninn.guards import command_rules as tools


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    reason: str
    argv: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.allowed


_VAR = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\})")
# Wrappers that would run an arbitrary command of their own: the allow-list cannot see inside.
_WRAPPERS = {"bash", "sh", "zsh", "dash", "fish", "eval", "exec", "xargs", "env", "nohup", "timeout", "watch",
             "nice", "command", "builtin", "source", ".", "time", "strace", "parallel", "python", "python3",
             "perl", "ruby", "node", "awk", "sed", "find"}
# Local commands that write, kill or reconfigure, named so the refusal says why.
_WRITERS = {"rm", "rmdir", "mv", "cp", "dd", "mkfs", "chmod", "chown", "chgrp", "tee", "truncate", "shred",
            "kill", "pkill", "killall", "reboot", "shutdown", "halt", "poweroff", "systemctl", "service",
            "touch", "mkdir", "ln", "install", "rsync", "scp", "sftp", "wget", "apt", "apt-get", "yum", "dnf",
            "pip", "npm", "terraform", "crontab", "passwd", "useradd", "userdel", "mount", "umount", "iptables"}


def _refuse(reason: str, argv: Sequence[str] = ()) -> Verdict:
    return Verdict(False, reason, tuple(argv))


def split(command: str) -> list[str] | Verdict:
    """Shell words of `command`, or a refusal if a shell would do more than run one command."""
    if not command.strip():
        return _refuse("empty command")
    if "\n" in command or "\r" in command or "\x00" in command:
        return _refuse("more than one line: shell chaining is refused")
    if "`" in command:
        return _refuse("backticks: command substitution is refused")
    stripped = _VAR.sub("", command)
    if "$" in stripped:
        return _refuse("`$` other than a plain $NAME: substitution/expansion is refused")
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError as exc:
        return _refuse(f"cannot parse: {exc}")
    for word in words:
        if word and set(word) <= set("();<>|&"):
            return _refuse(f"shell operator {word!r}: chaining, pipes and redirection are refused")
    if "!" in words[:1] or any(w.startswith(("<(", ">(")) for w in words):
        return _refuse("shell syntax is refused")
    return words


def check(command: str) -> Verdict:
    """Decide whether one proof command is read-only enough to run. Never raises."""
    try:
        return _check(command)
    except Exception as exc:  # fail closed: a crashing guard is a deny, never a pass
        return _refuse(f"guard error ({type(exc).__name__}): refused")


def _check(command: str) -> Verdict:
    words = split(command)
    if isinstance(words, Verdict):
        return words
    return check_argv(words)


def check_argv(argv: Sequence[str]) -> Verdict:
    argv = list(argv)
    if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", argv[0]):
        return _refuse("leading VAR=value assignments are refused (they can change what runs)", argv)
    tool = argv[0].rsplit("/", 1)[-1]
    if tool in _WRAPPERS:
        return _refuse(f"{tool} runs another command the guard cannot see: refused", argv)
    if tool in _WRITERS:
        return _refuse(f"{tool} writes or changes state: on the deny-list", argv)
    rule = RULES.get(tool)
    if rule is None:
        return _refuse(f"no read-only rule for {tool!r}: not on the allow-list", argv)
    problem = rule(argv[1:])
    if problem:
        return _refuse(f"{tool}: {problem}", argv)
    return Verdict(True, f"{tool}: read-only", tuple(argv))


def _ssh(args: list[str]) -> str | None:
    host, remote = tools.ssh_split(args)
    if isinstance(host, str) and host.startswith("!"):
        return host[1:]
    if not host:
        return "no host"
    if not remote:
        return "no remote command: would open an interactive session"
    inner = split(" ".join(remote))
    if isinstance(inner, Verdict):
        return f"remote command: {inner.reason}"
    if inner[0] == "sudo":
        return _prefix("remote ", tools.sudo(inner[1:]))
    return tools.remote(inner)


def _prefix(prefix: str, problem: str | None) -> str | None:
    return f"{prefix}{problem}" if problem else None


def _fixed(*allowed: tuple[str, ...]) -> Callable[[list[str]], str | None]:
    def rule(args: list[str]) -> str | None:
        if tuple(args) in allowed:
            return None
        return "only " + ", ".join(repr(" ".join(a)) for a in allowed if a) + (" (or no arguments)" if () in allowed
                                                                               else "")
    return rule


RULES: dict[str, Callable[[list[str]], str | None]] = {
    "kubectl": tools.kubectl,
    "aws": tools.aws,
    "az": tools.az,
    "gcloud": tools.gcloud,
    "curl": tools.curl,
    "ssh": _ssh,
    "sudo": tools.sudo,
    "helm": tools.helm,
    "true": _fixed(()),
    "hostname": _fixed((), ("-f",), ("-s",)),
    "whoami": _fixed(()),
    "id": _fixed((), ("-u",), ("-un",)),
    "uname": _fixed((), ("-a",), ("-r",), ("-n",)),
    "uptime": _fixed(()),
    "nc": tools.nc,
    "ping": tools.ping,
    "getent": tools.getent,
    "dig": tools.lookup,
    "host": tools.lookup,
    "nslookup": tools.lookup,
    "git": tools.git,
    "gh": _fixed(("auth", "status")),
    "vault": _fixed(("token", "lookup"), ("status",)),
    "docker": _fixed(("version",), ("info",)),
    "pg_isready": tools.passthrough_flags,
}


def parse_shell(command: str) -> list[str]:
    """shlex words of an access step, without judging it (for step classification)."""
    try:
        return shlex.split(command)
    except ValueError:
        return []
