"""The read-only guard in front of every command `muninn verify` runs: an allow-list.

    verdict = check(command, variables=("JIRA_API_TOKEN",))
    verdict.allowed, verdict.reason, verdict.argv

How it judges, and why:
- The line is split the way bash splits it (`shell_words`), and anything bash would treat as
  more than plain words outside single quotes is refused: shlex read `hostname -f#;touch x` as
  one command where bash runs two.
- The first word must name a tool with a spec (`allow_cloud`, `allow_net`); the spec
  lists every verb a proof may use and every option with its arity and a check of its value.
  Every other option, spelling, prefix or verb is refused, so the reads that print credentials
  and the flags that write, run programs or read configs are refused because nobody listed them.
- `ssh HOST CMD`: the remote shell parses CMD again, so CMD is judged by the same rules, with no
  variables and no `~`.
A check that crashes is a refusal. `verify --dry-run` prints this same verdict: the sweep's plan
holds it and the run acts on the plan.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from muninn.guards.command import allow_cloud, allow_net
from muninn.guards.command.argspec import (
    HOST,
    INT,
    NAME,
    PATH,
    SWITCH,
    Refused,
    Tool,
    Verb,
    one_of,
    parse,
    read_option,
    value,
)
from muninn.guards.command.shell_words import ShellRefusal, Word, split


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    reason: str
    argv: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.allowed


TOOLS: dict[str, Tool] = {**allow_cloud.TOOLS, **allow_net.TOOLS}
# Named so the refusal says why: each runs another command the guard cannot see.
_WRAPPERS = {"bash", "sh", "zsh", "dash", "fish", "eval", "exec", "xargs", "env", "nohup", "timeout", "watch",
             "nice", "command", "builtin", "source", ".", "time", "strace", "parallel", "python", "python3",
             "perl", "ruby", "node", "awk", "sed", "find"}
# A path to the tool is accepted only in the system's own bin directories (not ./kubectl, /tmp/x/curl).
_BIN_DIRS = ("/usr/bin/", "/bin/", "/usr/local/bin/", "/usr/sbin/", "/sbin/", "/usr/local/sbin/", "/snap/bin/",
             "/opt/homebrew/bin/")

# --- ssh ------------------------------------------------------------------------------------------------
# -o KEY=VALUE only (no spaces, no quotes), KEY compared the way ssh does (case-insensitively).
_SSH_OPTIONS = {
    "batchmode": one_of("yes", "no"), "connecttimeout": INT, "connectionattempts": INT,
    # no/accept-new add the host key to known_hosts: only with UserKnownHostsFile=/dev/null (checked in _ssh).
    "stricthostkeychecking": one_of("yes", "no", "accept-new"), "userknownhostsfile": one_of("/dev/null"),
    "serveraliveinterval": INT, "serveralivecountmax": INT,
    "loglevel": one_of("QUIET", "FATAL", "ERROR", "INFO", "quiet", "fatal", "error", "info"),
    "passwordauthentication": one_of("yes", "no"), "kbdinteractiveauthentication": one_of("yes", "no"),
    "preferredauthentications": one_of("publickey", "password", "keyboard-interactive", "publickey,password"),
    "identitiesonly": one_of("yes", "no"), "user": NAME, "port": INT, "addressfamily": one_of("inet", "inet6", "any"),
}


def _ssh_option(text: str) -> str | None:
    m = re.fullmatch(r"([A-Za-z]+)=([A-Za-z0-9._@:,/-]+)", text)
    if not m:
        return f"{text!r} is not KEY=VALUE (no spaces or quotes)"
    check = _SSH_OPTIONS.get(m.group(1).lower())
    if check is None:
        return (f"ssh option {m.group(1)} is not on the allow-list (ProxyCommand, LocalCommand, PKCS11Provider "
                "and their kind run programs)")
    return check(m.group(2))


_USER_HOST = re.compile(r"(?:[A-Za-z0-9._-]+@)?([A-Za-z0-9][A-Za-z0-9.-]*)")
SSH = Tool("ssh", "gnu", {
    **{f: SWITCH for f in ("-4", "-6", "-T", "-q", "-n", "-C", "-x", "-a", "-k", "-v")},
    "-p": value(INT), "-l": value(NAME), "-i": value(PATH), "-o": value(_ssh_option),
    "-J": value(lambda v: None if all(_USER_HOST.fullmatch(h.rsplit(":", 1)[0]) for h in v.split(","))
                else f"{v!r} is not [USER@]HOST[:PORT] jump hosts"),
}, {(): Verb()})


def _ssh(words: Sequence[Word]) -> None:
    options: dict[str, list[str]] = {}
    host: str | None = None
    i = 0
    # OpenSSH reads options before the host and again after it, up to the first other word.
    while i < len(words):
        word = words[i]
        if word.tainted:
            raise Refused(f"{word.text!r}: a $VARIABLE is refused in an ssh command line")
        if word.text.startswith("-") and word.text != "-":
            if word.text == "--":
                raise Refused("'--' is refused")
            i = read_option(SSH, SSH.flags, words, i, options) + 1
            continue
        if host is not None:
            break
        target = _USER_HOST.fullmatch(word.text)
        if target is None or HOST(target.group(1)):
            raise Refused(f"{word.text!r} is not [USER@]HOST")
        host = word.text
        i += 1
    if host is None:
        raise Refused("no host")
    settings = {k.lower(): v for k, _, v in (o.partition("=") for o in options.get("-o", []))}
    if settings.get("stricthostkeychecking", "yes") != "yes" and "userknownhostsfile" not in settings:
        raise Refused("StrictHostKeyChecking other than yes writes ~/.ssh/known_hosts: add "
                      "-o UserKnownHostsFile=/dev/null")
    remote = words[i:]
    if not remote:
        raise Refused("no remote command: would open an interactive session")
    inner = _check(" ".join(w.text for w in remote), variables=(), remote=True)
    if not inner.allowed:
        raise Refused(f"remote command: {inner.reason}")


# --- the verdict ----------------------------------------------------------------------------------------
def _refuse(reason: str, argv: Sequence[str] = ()) -> Verdict:
    return Verdict(False, reason, tuple(argv))


def check(command: str, variables: Collection[str] | None = None) -> Verdict:
    """Decide whether one proof command is read-only enough to run. Never raises.

    `variables`: the names this entry injects, allowed as "$NAME" inside double quotes
    (None when the caller does not know them: any name is accepted there).
    """
    try:
        return _check(command, variables, remote=False)
    except Exception as exc:  # fail closed: a crashing guard is a deny, never a pass
        return _refuse(f"guard error ({type(exc).__name__}): refused")


def _tool(first: Word) -> str:
    text = first.text
    if first.tainted:
        raise Refused("the command name may not come from a variable")
    if re.match(r"[A-Za-z_][A-Za-z0-9_]*=", text):
        raise Refused("leading VAR=value assignments are refused (they can change what runs)")
    if "/" in text:
        if text.rsplit("/", 1)[0] + "/" not in _BIN_DIRS:
            raise Refused(f"{text!r}: a path to a tool is accepted only in the system bin directories")
        text = text.rsplit("/", 1)[-1]
    return text


def _check(command: str, variables: Collection[str] | None, *, remote: bool) -> Verdict:
    try:
        words = split(command, variables=variables, home=not remote)
    except ShellRefusal as exc:
        return _refuse(str(exc))
    argv = [w.text for w in words]
    try:
        tool = _tool(words[0])
    except Refused as exc:
        return _refuse(str(exc), argv)
    if tool in _WRAPPERS:
        return _refuse(f"{tool} runs another command the guard cannot see: refused", argv)
    try:
        if tool == "ssh":
            if remote:
                raise Refused("ssh inside an ssh command is refused")
            _ssh(words[1:])
        elif tool in allow_net.CUSTOM:
            allow_net.CUSTOM[tool](words[1:])
        elif tool in TOOLS:
            parse(TOOLS[tool], words[1:])
        else:
            return _refuse(f"no read-only rule for {tool!r}: not on the allow-list", argv)
    except Refused as exc:
        message = str(exc)
        return _refuse(message if message.startswith((f"{tool} ", f"{tool}: ")) else f"{tool}: {message}", argv)
    return Verdict(True, f"{tool}: read-only", tuple(argv))
