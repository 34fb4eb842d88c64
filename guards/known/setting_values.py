"""Which values of the settings read from where secrets live (a Kubernetes Secret's keys, a repo's `.env`
files, a config file held in a Secret) become known values: one rule, chosen by the setting's key.

- A key that names a credential (`secret_fields.secret_field`, a one-word label of `credential_words`:
  `DB_PASS`, `LOGIN_PWD`, or one of its `SETTING_WORDS`: `SIGNING_SALT`, `DATABASE_DSN`; or a bare `key`:
  `DB_KEY`): the slot says secret, so `secret_values.is_credential_value` applies (`hunter2x` is kept).
- A password inside a value (a URL's `user:PW@`, the `password=` / `pwd=` / `token=` part of a DSN, a JDBC
  URL, a `key=value;` connection string) is a value of its own under the same rule, and the whole value
  is kept too: both get pasted.
- A key that names an identifier (`user`, `host`, `*_id`, `*_name`, `namespace`) gives nothing unless its
  value holds such a password: a user name in the known set would vanish from every note.
- Any other key: the guessed-value filter (`is_guessed_secret`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from muninn.guards.command.secret_fields import secret_field, words
from muninn.guards.known.secret_values import is_credential_value, is_guessed_secret
from muninn.guards.undeclared.credential_words import LABELS, SETTING_WORDS, USER_LABELS

# One-word credential labels (`pass`, `pwd`, `pin`, `passwort`) name a setting's secret too.
_CREDENTIAL_WORDS = frozenset({w for w in LABELS if re.fullmatch(r"[a-z]+", w)} | set(SETTING_WORDS))
# Words of a key name that say its value is an address or a name.
IDENTIFIER_WORDS = frozenset(
    {w for label in USER_LABELS for w in label.split()} |
    set("host hostname server endpoint url uri address addr port database db dbname schema namespace region "
        "zone project bucket cluster domain realm tenant issuer audience id name path".split()))
# A last word that makes the whole key name a thing about a secret, not the secret (`TOKEN_ID`,
# `SECRET_NAME`, `PASSWORD_FILE`, `AUTH_URL`, `TOKEN_TTL`).
_ABOUT_WORDS = frozenset(
    "id ids name names file path dir url uri host hostname user username arn type length ttl timeout expiry "
    "expires version prefix header algorithm method mode provider count enabled field env var format maps map "
    "backend helper prompt command cmd program encryption policy store".split())
# A bare `key` that names something public or a lookup (`PUBLIC_KEY`, `SORT_KEY`, `CACHE_KEY`).
_PUBLIC_KEY_WORDS = frozenset("public pub host sort partition foreign cache object lookup idempotency".split())
_URL_PASSWORD = re.compile(r"://[^\s:@/]*:([^\s@/]+)@")
# `name=value` parts of a DSN (`host=db password=x`), a query (`?user=u&password=x`) or a connection
# string (`Server=db;User Id=sa;Password=x;`); a quoted value may hold the separators.
_PART = re.compile(r"(?:^|[?&;\s])([A-Za-z][\w.-]*(?: [A-Za-z][\w-]*)?)\s*=\s*"
                   r"('[^']*'|\"[^\"]*\"|[^;&\s'\"]+)")


def credential_key(key: str) -> bool:
    """`DB_PASSWORD`, `USER_PASS`, `tls.key`, `SIGNING_SALT`, `DB_KEY`; not `TOKEN_ID` or `SECRET_NAME`."""
    parts = words(key)
    if not parts or parts[-1] in _ABOUT_WORDS or parts == ["pin"]:
        return False   # a bare `Pin` is apt's and TLS pinning's; `SIM_PIN`, `pin_code` are a PIN
    if secret_field(key) is not None or _CREDENTIAL_WORDS & set(parts):
        return True
    return parts[-1] in ("key", "keys") and not _PUBLIC_KEY_WORDS & set(parts)


def identifier_key(key: str) -> bool:
    """A key that names an identifier and no secret (`DB_USER`, `client_id`, `host`, `namespace`)."""
    parts = words(key)
    return not credential_key(key) and bool(IDENTIFIER_WORDS & set(parts) or (parts and parts[-1] in _ABOUT_WORDS))


def embedded(value: str) -> list[tuple[str, str]]:
    """(name, password) of the credentials inside a value: a URL's password, and every `name=value` part
    whose name is a credential's (`password=`, `Pwd=`, `AccountKey=`, `sslpassword=`)."""
    out: list[tuple[str, str]] = []
    for m in _URL_PASSWORD.finditer(value):
        out.append(("password", m.group(1)))
    for m in _PART.finditer(value):
        name, part = m.group(1), m.group(2)
        if part[:1] in "'\"":
            part = part[1:-1]
        if credential_key(name) and part:
            out.append((name.replace(" ", "_"), part))
    return out


def setting_values(key: str, value: str) -> Iterator[tuple[str, str]]:
    """(id suffix, value) of what of one setting is a known value, filtered: the value itself
    (suffix "") and each credential inside it (`.password`)."""
    # A Secret's value often ends in the newline `echo` left; the value pasted elsewhere has none.
    value = value.strip()
    parts = embedded(value)
    credential = credential_key(key) or bool(parts)
    if not credential and identifier_key(key):
        return
    # A value that holds a password is kept whole as well: the DSN or connection string gets pasted.
    if parts or (is_credential_value(value) if credential else is_guessed_secret(value)):
        yield "", value
    seen = {value}
    for name, part in parts:
        if part not in seen and is_credential_value(part, embedded=True):
            seen.add(part)
            yield f".{name}", part
