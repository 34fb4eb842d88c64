"""`API key: v`, `api key = v`, `**Password:** v`, `| password | v |`, `DB_PASSWORD=v`.

detect-secrets' keyword detector knows `api_key` and `api-key` but not `API key`, the form that
slipped through in the seed project; nor markdown bold or table cells.
"""

from __future__ import annotations

import re

from muninn.guards.rules import Rule, looks_random, register

_QUALIFIER = (
    r"api|access|secret|auth|bot|client|private|app|service|signing|encryption|master|deploy|refresh"
    r"|session|account|db|database|admin|root|user|webhook|slack|github|gitlab|jira|aws|gcp|azure|sudo|vpn"
)
_NOUN = r"key|token|secret|password|passwd|passphrase|pwd|pass|pw|credentials?"
# Without a qualifier these are ordinary words (`primary key: id`).
_NEEDS_QUALIFIER = {"key", "pass", "pw"}

_PATTERN = re.compile(
    rf"(?<![A-Za-z0-9])(?P<qual>(?:{_QUALIFIER})[ _.-]?)?(?P<noun>{_NOUN})s?(?![A-Za-z])"
    r"[*_`'\"\]]*"                                   # closing bold, quote or code of the label
    r"[ \t]*(?:\|[ \t]*|:=|=>|::|[:=]|[ \t]is[ \t])"  # separator, a table cell bar included
    r"[ \t]*[*_]*[ \t]*[`'\"]?"                      # opening decoration of the value
    r"(?P<secret>[^\s`'\"|,;<>()\[\]{}]+)",
    re.IGNORECASE,
)


@register
class LabelledSecret(Rule):
    name = "labelled-secret"
    patterns = (_PATTERN,)
    triggers = ("key", "token", "secret", "pass", "pw", "credential")

    def accept(self, match: re.Match[str], value: str) -> bool:
        if not match.group("qual") and match.group("noun").lower() in _NEEDS_QUALIFIER:
            return False
        return looks_random(value.rstrip(".:"))
