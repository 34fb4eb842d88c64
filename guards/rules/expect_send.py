"""What an `expect` script sends after a password prompt: `expect "Password:"` then `send "v\r"`
(also `-re`, `expect_user`, pexpect's `child.sendline("v")` after `child.expect("assword")`). The value
has no label of its own; the prompt a few lines above is its label."""

from __future__ import annotations

import re
from collections.abc import Iterator

from muninn.guards.rules import Rule, is_placeholder

_PROMPT = re.compile(r"expect(?:_user|_out)?\b[^\n]*?(?:pass(?:word|phrase|code)?|pin|secret|token|kennwort|passwort)"
                     r"|\.expect\([^\n)]*(?:assword|assphrase|pin|secret|token)", re.IGNORECASE)
_SEND = re.compile(r"(?:\bsend(?:_user)?[ \t]+(?:--[ \t]+)?|\.send(?:line)?\([ \t]*[rbu]?)"
                   r"([\"'{])(?P<secret>[^\"'}\n\\$\[]{3,}?)(?:\\[rn])*[\"'}]")
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
