"""`Authorization: Bearer v`, `Basic v`, `token v` in headers and curl lines."""

from __future__ import annotations

import re

from muninn.guards.rules import Rule, looks_random, register


@register
class AuthHeader(Rule):
    name = "auth-header"
    patterns = (
        # In a header line the value runs to the next space or quote, whatever its characters.
        re.compile(r"(?i)\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:(?:bearer|basic|token|digest)[ \t]+)?"
                   r"(?P<secret>[^\s\"'`]{8,})"),
        re.compile(r"(?i)\b(?:bearer|basic|token|digest)[ \t]+(?P<secret>[A-Za-z0-9._~+/=-]{8,})"),
        re.compile(r"(?i)\b(?:x-api-key|x-auth-token|private-token|api-key)[\"']?[ \t]*[:=][ \t]*[\"']?"
                   r"(?P<secret>[A-Za-z0-9._~+/=-]{8,})"),
    )
    triggers = ("authorization", "bearer", "basic", "token", "digest", "api-key")

    def accept(self, match: re.Match[str], value: str) -> bool:
        return looks_random(value)
