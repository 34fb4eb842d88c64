"""`Authorization: Bearer v`, `Basic v`, `token v` in headers and curl lines, `X-API-Key: v`."""

from __future__ import annotations

import re

from muninn.guards.rules import Rule, looks_random, ordinary_words

# Bare, with no header label: `basic`, `bearer`, `token` and `digest` are English words too, so a value
# of ordinary words after one is prose (`basic Unix-like`, `Basic Setup/part-1`, `token expired.`).
# A header line is strong context and keeps any value that looks random.
_BARE = re.compile(r"(?:bearer|basic|token|digest)[ \t]+(?P<secret>[a-z0-9._~+/=-]{8,})")


class AuthHeader(Rule):
    name = "auth-header"
    patterns = (
        # In a header line the value runs to the next space or quote, whatever its characters.
        re.compile(r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:(?:bearer|basic|token|digest)[ \t]+)?"
                   r"(?P<secret>[^\s\"'`]{8,})"),
        _BARE,
        re.compile(r"(?:x-api-key|x-auth-token|private-token|api-key)[\"']?[ \t]*[:=][ \t]*[\"']?"
                   r"(?P<secret>[a-z0-9._~+/=-]{8,})"),
    )
    triggers = ("authorization", "bearer", "basic", "token", "digest", "api-key")
    lowercase = True
    boundary = True

    def accept(self, match: re.Match[str], value: str) -> bool:
        # By pattern text, not identity: a length-changing lower-case runs recompiled copies (Rule.spans).
        bare = match.re.pattern == _BARE.pattern
        return looks_random(value) and not (bare and ordinary_words(value))
