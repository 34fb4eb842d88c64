"""A secret given as a YAML block scalar: `password: >-` or `token: |` with the value on the indented
line(s) below. The label is on one line and the value on the next, so a `label: value` rule misses it."""

from __future__ import annotations

import re

from muninn.guards.rules import Rule, is_placeholder, looks_random

_PATTERN = re.compile(
    r"(?:password|passwd|passphrase|secret|token|api[_-]?key|private[_-]?key|credentials?|client[_-]?secret)"
    r"[\w-]*[\"']?[ \t]*:[ \t]*[>|][+-]?\d?[ \t]*(?:#[^\n]*)?\r?\n(?:[ \t]*\r?\n)*"   # CRLF, blank lines (`>+`)
    r"(?P<indent>[ \t]+)(?P<secret>\S[^\r\n]*)",
    re.IGNORECASE)


class YamlBlockSecret(Rule):
    name = "yaml-block-secret"
    patterns = (_PATTERN,)
    triggers = ("pass", "secret", "token", "key", "credential")

    def accept(self, match: re.Match[str], value: str) -> bool:
        # One made-up token: "rotated yearly, see vault" below the label is a note, not the value.
        value = value.strip()
        return " " not in value and not is_placeholder(value) and looks_random(value, 6)
