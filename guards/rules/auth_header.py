"""`Authorization: Bearer v`, `Basic v`, `token v` in headers and curl lines, `X-API-Key: v`."""

from __future__ import annotations

import re

from muninn.guards.rules import Rule, looks_random


class AuthHeader(Rule):
    name = "auth-header"
    patterns = (
        # In a header line the value runs to the next space or quote, whatever its characters.
        re.compile(r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:(?:bearer|basic|token|digest)[ \t]+)?"
                   r"(?P<secret>[^\s\"'`]{8,})"),
        re.compile(r"(?:bearer|basic|token|digest)[ \t]+(?P<secret>[a-z0-9._~+/=-]{8,})"),
        re.compile(r"(?:x-api-key|x-auth-token|private-token|api-key)[\"']?[ \t]*[:=][ \t]*[\"']?"
                   r"(?P<secret>[a-z0-9._~+/=-]{8,})"),
    )
    triggers = ("authorization", "bearer", "basic", "token", "digest", "api-key")
    lowercase = True
    boundary = True

    def accept(self, match: re.Match[str], value: str) -> bool:
        return looks_random(value)
