"""Split one command line into the words bash would pass, or refuse it.

This implements bash's rules for a small subset, and refuses everything outside it, instead of
approximating bash with shlex (which drops `hostname -f#;touch x` at the `#`, where bash runs
both commands). Accepted:
- plain characters `A-Z a-z 0-9 - _ . / : = , + @ %` outside quotes;
- 'single quotes', inside which bash treats nothing specially;
- "double quotes" holding plain text and `$NAME` / `${NAME}` for the variables the entry injects
  (a double-quoted expansion is one word: no splitting, no globbing);
- a leading `~/`, expanded to the home directory as bash does (local commands only).
Anything else that bash gives a meaning to outside single quotes is refused by name: `#`, `$`,
backticks, `; | & < > ( )`, globs `* ? [ ]`, braces, `!`, `\\`, a tilde elsewhere, control
characters and newlines, and non-ASCII text outside quotes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection
from dataclasses import dataclass

_PLAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_./:=,+@%")
_MEANING = {
    "#": "starts a comment", "$": "expands a variable or runs a substitution", "`": "runs a command",
    ";": "chains commands", "&": "chains or backgrounds commands", "|": "pipes into another command",
    "<": "redirects", ">": "redirects", "(": "opens a subshell", ")": "closes a subshell",
    "*": "is a glob", "?": "is a glob", "[": "is a glob", "]": "is a glob", "{": "is brace expansion",
    "}": "is brace expansion", "!": "negates or expands history", "\\": "escapes the next character",
    "~": "expands a home directory", "^": "substitutes history",
}
_NAME = re.compile(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})")


@dataclass(frozen=True)
class Word:
    text: str                 # the argument bash passes; an injected variable stays as `$NAME`
    tainted: bool = False     # holds a variable: its value is not known to the guard

    def __str__(self) -> str:
        return self.text


class ShellRefusal(ValueError):
    """One sentence: what bash would do with this line that a proof command may not."""


def _describe(ch: str) -> str:
    if ch in _MEANING:
        return f"{ch!r} outside single quotes {_MEANING[ch]} in bash"
    if ord(ch) < 32 or ord(ch) == 127:
        return f"control character {ch!r}: a newline or control byte can start another command"
    return f"{ch!r} outside quotes: only plain ASCII words are judged"


def _double_quoted(command: str, i: int, variables: Collection[str] | None) -> tuple[str, bool, int]:
    """(text, tainted, index after the closing quote) for the double-quoted part starting at i."""
    out: list[str] = []
    tainted = False
    j = i + 1
    while j < len(command):
        ch = command[j]
        if ch == '"':
            return "".join(out), tainted, j + 1
        if ch == "$":
            m = _NAME.match(command, j)
            if not m:
                raise ShellRefusal("'$' in double quotes other than $NAME or ${NAME}: a substitution or "
                                   "parameter operator")
            name = m.group(1) or m.group(2)
            if variables is not None and name not in variables:
                raise ShellRefusal(f"${name} is not a variable this entry injects ({sorted(variables) or 'none'})")
            out.append(f"${name}")
            tainted = True
            j = m.end()
            continue
        if ch in "`\\!" or ord(ch) < 32 or ord(ch) == 127:
            raise ShellRefusal(_describe(ch).replace("outside single quotes", "inside double quotes"))
        out.append(ch)
        j += 1
    raise ShellRefusal("unterminated double quote")


def split(command: str, *, variables: Collection[str] | None = None, home: bool = True) -> list[Word]:
    """The words bash would pass for `command`. Raises ShellRefusal for anything outside the subset.

    `variables`: names that may appear as "$NAME" (None: any name; () for none).
    `home`: expand a leading `~/` (False for a command a remote shell will parse).
    """
    words: list[Word] = []
    i, n = 0, len(command)
    while i < n:
        if command[i] in " \t":
            i += 1
            continue
        parts: list[str] = []
        tainted = False
        if command.startswith("~/", i) and home:
            parts.append(os.path.expanduser("~"))
            i += 1
        while i < n and command[i] not in " \t":
            ch = command[i]
            if ch in _PLAIN:
                parts.append(ch)
                i += 1
            elif ch == "'":
                end = command.find("'", i + 1)
                if end < 0:
                    raise ShellRefusal("unterminated single quote")
                quoted = command[i + 1:end]
                bad = [c for c in quoted if ord(c) < 32 or ord(c) == 127]
                if bad:
                    raise ShellRefusal(_describe(bad[0]))
                parts.append(quoted)
                i = end + 1
            elif ch == '"':
                text, dirty, i = _double_quoted(command, i, variables)
                parts.append(text)
                tainted = tainted or dirty
            else:
                raise ShellRefusal(_describe(ch))
        words.append(Word("".join(parts), tainted))
    if not words:
        raise ShellRefusal("empty command")
    return words
