"""PEM and PGP private key blocks, over as many lines as they take.

A block cut off before its END line (a truncated paste) is redacted up to its last full base64
line (a short final line stays: it cannot be told from a word).
Literal `\\n` escapes (a key inside JSON) are part of the block too.
"""

from __future__ import annotations

import re

from muninn.guards.rules import Rule


class PrivateKey(Rule):
    name = "private-key"
    patterns = (
        re.compile(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
            # Bounded: without an END line, each BEGIN would otherwise scan to the end of the text.
            # Truncated (no END): the base64 lines (≥ 16 characters) and `Proc-Type:` style headers.
            r"(?:.{0,16384}?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
            r"|(?:(?:[ \t\r\n]|\\n)+(?:[A-Za-z0-9+/=]{16,}|[A-Z][A-Za-z-]+: [^\n\\]*))*)",
            re.DOTALL,
        ),
        re.compile(r"PuTTY-User-Key-File-\d:.*?Private-MAC: *[0-9a-f]+", re.DOTALL),
    )
    triggers = ("private key", "putty-user-key")
