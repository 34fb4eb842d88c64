"""What an `expect` script sends after a password prompt: `expect "Password:"` then `send "v\r"`
(also `-re`, `expect_user`, a pattern line in an `expect {…}` block, `exp_send`, `send -s --`, Perl's
`$exp->expect(…)` then `$exp->send("v\n")`, pexpect's `child.sendline("v")` after `child.expect("assword")`).
The value has no label of its own; the prompt a few lines above is its label."""

from __future__ import annotations

import re
from collections.abc import Iterator

from muninn.guards.rules import Rule, is_placeholder

# The prompt as scripts match it: `"Password:"`, `"*assword*"`, `-re "(P|p)assword"`, `[Pp]ass(word|phrase)`.
_SECRET_WORD = r"(?:ass(?:word|phrase|code|wort|[(?])|pass\b|\bpin\b|secret|token|kennwort)"
_PROMPT = re.compile(
    rf"expect(?:_user|_out)?\b[^\n]*?{_SECRET_WORD}"                      # Tcl, Perl's ->expect, pexpect's .expect
    rf"|^[ \t]*(?:-(?:re|ex|gl)[ \t]+)?[\"{{/][^\n]*?{_SECRET_WORD}",      # a pattern line of an `expect {` block
    re.IGNORECASE | re.MULTILINE)
# Tcl's `send`/`exp_send` with options (`-s`, `-i $id`, `--`), Perl's `->send(`, pexpect's `.send(`/`.sendline(`;
# the value may hold Tcl escapes (`\$`), not a variable.
_SEND = re.compile(r"(?:\b(?:exp_)?send(?:_user)?[ \t]+(?:-[-a-z]*[ \t]+(?:\$\w+[ \t]+)?)*"
                   r"|(?:\.|->)send(?:line)?\([ \t]*[rbu]?)"
                   r"([\"'{])(?P<secret>(?:[^\"'}\n\\$\[]|\\[^rn\n]){3,}?)(?:\\[rn])*[\"'}]")
_WINDOW = 3     # lines between the prompt and the send


class ExpectSend(Rule):
    name = "expect-send"
    patterns = ()
    triggers = ("expect",)

    def spans(self, text: str, lowered: str | None = None, *, checked: bool = False) -> Iterator[tuple[int, int]]:
        lowered = text.lower() if lowered is None else lowered
        if not checked and "expect" not in lowered:
            return
        for prompt in _PROMPT.finditer(text):
            tail = text[prompt.end():]
            window = "\n".join(tail.split("\n")[:_WINDOW + 1])
            m = _SEND.search(window)
            if m and not is_placeholder(m.group("secret")):
                yield prompt.end() + m.start("secret"), prompt.end() + m.end("secret")
