"""Password hashes: what `htpasswd`, `/etc/shadow`, `mkpasswd`, LDAP and most web apps store. A hash is
not the password, but it is the password to anyone with a wordlist and a GPU: crypt(3) forms (`$1$`,
`$apr1$`, `$2b$10$`, `$5$`, `$6$rounds=…$`, `$y$`, `$7$`), LDAP's `{SSHA}` / `{SHA}` / `{CRYPT}`, and
PHC strings (`$argon2id$v=19$…`, `$scrypt$…`, `$pbkdf2-sha256$…`)."""

from __future__ import annotations

import re

from muninn.guards.rules import Rule


class PasswordHash(Rule):
    name = "password-hash"
    patterns = (
        re.compile(r"\$(?:1|2[abxy]?|5|6|7|y|gy|apr1|md5|sha1|argon2(?:id|i|d)|scrypt|pbkdf2(?:-sha\d+)?)"
                   r"\$[^\s:$'\"]*(?:\$[^\s:$'\"]*){1,4}[^\s:$'\"]{8,}"),
        re.compile(r"\{(?:SSHA|SHA|SSHA256|SSHA512|SMD5|MD5|CRYPT|PBKDF2[-\w]*)\}(?P<secret>[A-Za-z0-9+/=.$]{12,})",
                   re.IGNORECASE),
    )
    triggers = ("$1$", "$2", "$5$", "$6$", "$7$", "$y$", "$gy$", "$apr1$", "$md5", "$sha1$", "$argon2", "$scrypt$",
                "$pbkdf2", "{ssha", "{sha", "{smd5", "{md5}", "{crypt}", "{pbkdf2")
