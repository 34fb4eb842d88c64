"""Output-shaping options that would select a secret: gcloud `--format value(proxy.password)`, kubectl
`-o jsonpath={.data.token}` or `custom-columns=K:.spec.privateKey`, aws and az `--query Credentials.SecretKey`.

A proof command's verb is read-only, but an expression that picks a field out of its output decides
what is printed: `gcloud config list --format 'value(proxy.password)'` prints the proxy password the
allow-listed `config get-value` refuses. So every output-shaping expression is read as field names,
and one that names a secret-ish field is refused. A name is split into words the ways fields are
spelled (`proxy.password`, `masterAuth`, `client_key`, `SECRET-ACCESS-KEY`, `privateKeyData`), and each
word, or two run together (`pass word`), is compared with the stems below; the longer stems are also
found inside one run-together word (`secretaccesskey`). A bare `Key` is an AWS tag's name
(`Tags[?Key=='Name']`), not a key, and `private` alone is an address (`privateIpAddress`): a key word
counts when a qualifier goes with it (`AccessKey`, `private_key`, `keyData`).
"""

from __future__ import annotations

import itertools
import re

from muninn.guards.command.argspec import Check

# Secret-ish words, in the spellings fields use. Matched against whole words after splitting.
_SECRET = frozenset(
    "password passwords passwd passwrd pwd pw passphrase passcode pin secret secrets token tokens "
    "credential credentials creds cred privatekey privkey apikey apikeys accesskey secretkey "
    "clientsecret clientkey signingkey masterkey sharedkey encryptionkey sessionkey sas sastoken "
    "connectionstring bearer cookie cookies auth authorization otp totp seed mnemonic keyring keystore "
    "kubeconfig dockerconfigjson htpasswd certificatekey keydata keymaterial".split())
# `key` with one of these in the same name is a key: `access_key`, `keyData`, `primaryKey`.
_KEY_QUALIFIERS = frozenset(
    "access secret private api client signing master shared encryption session ssh account storage primary "
    "secondary sas data material value values pem der rsa ecdsa ed25519 gpg pgp tls ssl auth admin".split())
_KEY = frozenset({"key", "keys"})
# Stems found inside one run-together word too (`secretaccesskey`, `clientpassword`, `kubeconfigdata`).
_INSIDE = ("password", "passwd", "passphrase", "secret", "token", "credential", "privatekey", "privkey", "apikey",
           "accesskey", "clientkey", "signingkey", "encryptionkey", "sessionkey", "sharedkey", "storagekey",
           "primarykey", "secondarykey", "masterkey", "keydata", "keymaterial", "masterauth", "kubeconfig",
           "connectionstring", "dockerconfig", "htpasswd")
# Not a secret although a stem is in it.
_PLAIN = frozenset({"passed", "passes", "passing", "bypass", "compass", "tokenizer", "tokenizers", "pinned",
                    "pinning", "secretary"})


def words(name: str) -> list[str]:
    """`masterAuth` -> master auth; `SECRET_ACCESS_KEY` -> secret access key; `tls\\.key` -> tls key."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name)
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def _names(expression: str) -> list[str]:
    """The identifiers an expression names: field paths, column specs, JMESPath keys, quoted keys."""
    return re.findall(r"[A-Za-z_][A-Za-z0-9_-]*(?:(?:\\?\.|\\\.)[A-Za-z_][A-Za-z0-9_-]*)*", expression)


def secret_field(expression: str) -> str | None:
    """The first field of `expression` that names a secret-ish thing, as written; None if none does."""
    for name in _names(expression):
        parts = words(name)
        joined = [a + b for a, b in itertools.pairwise(parts)]   # pass_word, api_key
        for word in (*parts, *joined):
            if word in _PLAIN:
                continue
            if word in _SECRET or any(stem in word for stem in _INSIDE):
                return name
        if _KEY & set(parts) and _KEY_QUALIFIERS & set(parts):
            return name
    return None


def no_secret_fields(check: Check) -> Check:
    """`check`, and then no field named in the value may be a secret-ish one."""
    def guarded(text: str) -> str | None:
        if problem := check(text):
            return problem
        if field := secret_field(text):
            return (f"{text!r} selects {field!r}, a secret-ish field: an output-shaping option may not pick "
                    "a credential out of a read")
        return None
    return guarded
