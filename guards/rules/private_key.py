"""PEM and PGP private key blocks, over as many lines as they take.

A block cut off before its END line (a truncated paste) is redacted up to the last base64 line.
Literal `\\n` escapes (a key inside JSON) are part of the block too.
"""

from __future__ import annotations

import re

from muninn.guards.rules import Rule, register


@register
class PrivateKey(Rule):
    name = "private-key"
    patterns = (
        re.compile(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|(?:[\sA-Za-z0-9+/=:,.-]|\\n)*)",
            re.DOTALL,
        ),
        re.compile(r"PuTTY-User-Key-File-\d:.*?Private-MAC: *[0-9a-f]+", re.DOTALL),
    )
    triggers = ("private key", "putty-user-key")
