"""Password hashes: what `htpasswd`, `/etc/shadow`, `mkpasswd`, LDAP and most web apps store. A hash is
not the password, but it is the password to anyone with a wordlist and a GPU. Read as families, not ids:

- modular crypt, `$id$[params$][salt$]hash`, with any id: crypt(3)'s (`$1$`, `$apr1$`, `$2b$10$`, `$5$`,
  `$6$rounds=…$`, `$y$`, `$7$`, `$3$$` NT), PHC strings (`$argon2id$v=19$…`, `$scrypt$…`, `$pbkdf2-sha256$…`)
  and phpass's (`$P$B…`, `$H$9…`, Drupal's `$S$D…`), which have no `$` after the id;
- an algorithm's name, then `$`-separated fields ending in the hash: Django (`pbkdf2_sha256$870000$salt$hash`,
  `scrypt$16384$salt$8$1$hash`, `md5$salt$hash`), Werkzeug (`pbkdf2:sha256:600000$salt$hash`,
  `scrypt:32768:8:1$salt$hash`), PostgreSQL's `SCRAM-SHA-256$4096:salt$stored:server`;
- a scheme in braces: LDAP's `{SSHA}`, `{CRYPT}`, Dovecot's `{SHA512-CRYPT}`, Atlassian's `{PKCS5S2}`;
- MySQL's `*` and 40 upper-case hex digits, PostgreSQL's `md5` and 32 hex digits.

An id nobody registered (`$foo$…`) needs a hash-like end: 16+ characters holding letters and digits, not
words; the algorithm forms need a hash word in the name (`sha`, `md5`, `crypt`, `pbkdf2`, `argon2`, …)."""

from __future__ import annotations

import re

from muninn.guards.rules import Rule, ordinary_words

_KNOWN_IDS = r"1|2[abxy]?|3|5|6|7|y|gy|apr1|md5|sha1|argon2(?:id|i|d)|scrypt|pbkdf2(?:-sha\d+)?|bcrypt(?:-sha256)?"
_HASH_WORDS = r"pbkdf2|scrypt|argon2|bcrypt|crypt|sha\d*|md5|scram|blake2\w?|yescrypt|ssha\d*|unsalted"
_FIELD = r"[^\s$'\"]*"
_END = r"[A-Za-z0-9./+=_-]{16,}"
_END_PAIR = rf"{_END}(?::{_END})?"    # SCRAM's `StoredKey:ServerKey`

_MODULAR_KNOWN = re.compile(rf"\$(?:{_KNOWN_IDS})\$[^\s:$'\"]*(?:\$[^\s:$'\"]*){{1,4}}[^\s:$'\"]{{8,}}")
_MODULAR_ANY = re.compile(rf"\$[a-z0-9][a-z0-9-]{{0,19}}\$(?:{_FIELD}\$){{0,5}}(?P<end>{_END})")
_PHPASS = re.compile(r"\$[PHS]\$[./0-9A-Za-z]{30,}")
# From the first `$`: `re` skips ahead to a literal fast. The algorithm's name in front is checked in `accept`.
_ALGORITHM = re.compile(rf"\$(?:{_FIELD}\$){{0,6}}(?P<end>{_END_PAIR})")
_ALGORITHM_NAME = re.compile(rf"(?:^|[^A-Za-z0-9$])[A-Za-z0-9_-]*(?i:{_HASH_WORDS})[A-Za-z0-9_:-]*$")
_BRACES = re.compile(r"\{(?:[A-Z0-9]+-)*(?:S?SHA\d*|S?MD5|CRYPT|PBKDF2|PKCS5S2|ARGON2\w*|BCRYPT|SCRAM|NTLM|LANMAN)"
                     r"(?:-[A-Z0-9]+)*\}(?P<secret>[A-Za-z0-9+/=.$]{12,})", re.IGNORECASE)
_MYSQL = re.compile(r"\*[0-9A-F]{40}(?![0-9A-Za-z])")
_PG_MD5 = re.compile(r"md5[0-9a-f]{32}(?![0-9a-z])")
_BOUNDED = (_MYSQL, _PG_MD5)


def _hash_like(end: str) -> bool:
    end = end.rstrip("=.")
    return (len(end) >= 16 and any(c.isdigit() for c in end) and any(c.isalpha() for c in end)
            and not ordinary_words(end))


class PasswordHash(Rule):
    name = "password-hash"
    patterns = (_MODULAR_KNOWN, _MODULAR_ANY, _PHPASS, _ALGORITHM, _BRACES, _MYSQL, _PG_MD5)
    triggers = ("$", "{", "*", "md5")

    def accept(self, match: re.Match[str], value: str) -> bool:
        if not super().accept(match, value):
            return False
        if match.re in _BOUNDED and match.start() > 0 and (match.string[match.start() - 1].isalnum()
                                                            or match.string[match.start() - 1] == "$"):
            return False
        if match.re is _ALGORITHM and not _ALGORITHM_NAME.search(match.string, max(0, match.start() - 48),
                                                                  match.start()):
            return False
        return "end" not in match.re.groupindex or _hash_like(match.group("end"))
