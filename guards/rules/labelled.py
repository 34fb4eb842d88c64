"""`API key: v`, `api key = v`, `**Password:** v`, `| password | v |`, `DB_PASSWORD=v`,
`<password>v</password>`.

detect-secrets' keyword detector knows `api_key` and `api-key` but not `API key`, the form that
slipped through in the seed project; nor markdown bold or table cells.

The pattern starts at the noun (`key`, `token`, `password`, …) so `re` can skip ahead to it; the
qualifier in front (`api `, `DB_`, `slack bot `) is checked in `accept`.
"""

from __future__ import annotations

import re

from muninn.guards.rules import Rule, looks_random, names_a_file

_QUALIFIER = (
    r"api|access|secret|auth|bot|client|private|app|service|signing|encryption|master|deploy|refresh"
    r"|session|account|db|database|admin|root|user|webhook|slack|github|gitlab|jira|aws|gcp|azure|sudo|vpn"
)
_QUALIFIED = re.compile(rf"(?:^|[^a-z0-9])(?:{_QUALIFIER})[ _.-]?$")
_NOUN = r"password|passwd|passphrase|pass|pwd|pw|key|token|secret|credentials?"
# Without a qualifier these are ordinary words (`primary key: id`).
_NEEDS_QUALIFIER = {"key", "pass", "pw"}

# A permission string, as `ls -l` prints it next to `/etc/passwd` or `/etc/shadow` in a table.
_FILE_MODE = re.compile(r"[-dlcbps][-r][-w][-xsS][-r][-w][-xsS][-r][-w][-xtT][.+@]?")

_PATTERN = re.compile(
    rf"(?P<noun>{_NOUN})s?(?![a-z])"
    r"[*_`'\"\]]*"                                   # closing bold, quote or code of the label
    r"[ \t]*(?:\|[ \t]*|:=|=>|::|[:=>]|[ \t]is[ \t])"  # separator: a table cell bar, an XML tag's `>`
    r"[ \t]*[*_]*[ \t]*[`'\"]?"                      # opening decoration of the value
    r"(?P<secret>[^\s`'\"|,;<>()\[\]{}]+)"
)


class LabelledSecret(Rule):
    name = "labelled-secret"
    patterns = (_PATTERN,)
    triggers = ("key", "token", "secret", "pass", "pw", "credential")
    lowercase = True

    def accept(self, match: re.Match[str], value: str) -> bool:
        start = match.start("noun")
        before = match.string[max(0, start - 24):start].lower()
        qualified = bool(_QUALIFIED.search(before))
        if before and before[-1].isalnum() and not qualified:
            return False  # `monkey`, `mytoken`
        if match.group("noun").lower() in _NEEDS_QUALIFIER and not qualified:
            return False
        value = value.rstrip(".:")
        # A path is where a secret is kept (`credentials=/root/.smbcred`), not the secret. Words joined
        # by hyphens are not exempt here: after a label they may be a passphrase (`correct-horse-…`).
        return looks_random(value) and not names_a_file(value) and not _FILE_MODE.fullmatch(value)
