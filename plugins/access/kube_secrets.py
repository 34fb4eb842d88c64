"""The values of Kubernetes Secrets, from `kubectl get secrets -o json`: what is secret in them.

Only objects of `kind: Secret` are read: `data` (base64) and `stringData`. What is public is left
out, because a known value is redacted everywhere: a namespace, a CA certificate or a host name in
the known set would vanish from every note that mentions it.
- `ca.crt`, `tls.crt`, `namespace` and any PEM block that is not a private key (certificates and
  public keys are public by design);
- a key that names an identifier and no secret (`username`, `host`, `database`, `client_id`:
  `secret_values.names_identifier`);
- from a `kubernetes.io/dockerconfigjson` (or `.dockercfg`) value, only each registry's password,
  token and `auth` (and the password inside `auth`), never the registry host or the user name;
- a JSON value (a cloud service-account key file) is read leaf by leaf; a multi-line value that is
  not a key (a config file) line by line, like a dump, keeping the settings named as credentials;
- every candidate then passes the one filter for values nobody declared
  (`secret_values.is_guessed_secret`: secret-ish, not a locator).
Ids are `kube:<context>/<namespace>/<secret>.<key>`; values never appear in a message.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator
from typing import Any

from muninn.guards.secret_fields import secret_field
from muninn.guards.secret_values import is_guessed_secret, names_identifier, text_values

# Keys whose value is public in every Secret type that has them.
PUBLIC_KEYS = frozenset({"ca.crt", "tls.crt", "namespace", "ca-bundle.crt", "service-ca.crt"})
DOCKER_KEYS = frozenset({".dockerconfigjson", ".dockercfg"})
_DOCKER_FIELDS = ("password", "auth", "identitytoken", "registrytoken")
_URL_PASSWORD = re.compile(r"://[^\s:@/]*:[^\s@/]+@")
_PEM = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----.*?-----END \1-----", re.DOTALL)


def items(doc: Any) -> Iterator[dict[str, Any]]:
    """The Secret objects of a `v1 List` (or of one object): `kind: Secret` only."""
    if not isinstance(doc, dict):
        return
    objects = doc.get("items") if isinstance(doc.get("items"), list) else [doc]
    for obj in objects:
        if isinstance(obj, dict) and obj.get("kind") == "Secret":
            yield obj


def values(doc: Any, context: str) -> Iterator[tuple[str, str]]:
    """(id, value) for every secret value in a `kubectl get secrets -o json` document, filtered."""
    for obj in items(doc):
        meta = obj.get("metadata") or {}
        base = f"kube:{context}/{meta.get('namespace', '')}/{meta.get('name', '')}"
        fields: dict[str, str] = {}
        for key, encoded in (obj.get("data") or {}).items():
            decoded = _decode(encoded)
            if decoded is not None:
                fields[key] = decoded
        fields.update({k: v for k, v in (obj.get("stringData") or {}).items() if isinstance(v, str)})
        for key, value in fields.items():
            for suffix, candidate in _candidates(key, value):
                if is_guessed_secret(candidate):
                    yield f"{base}.{key}{suffix}", candidate


def _decode(encoded: Any) -> str | None:
    """A `data` value as text; binary data (a Java keystore) matches no text, so it is left out."""
    if not isinstance(encoded, str):
        return None
    try:
        return base64.b64decode(encoded, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def _candidates(key: str, value: str) -> Iterator[tuple[str, str]]:
    if key in PUBLIC_KEYS or names_identifier(key.rsplit('.', 1)[-1], value):
        return
    if key in DOCKER_KEYS:
        yield from _docker(value)
        return
    text = value.strip()
    if text[:1] in "{[":
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None
        if isinstance(doc, (dict, list)):
            yield from ((f".{path}", leaf) for path, leaf in _leaves(doc, ""))
            return
    if "-----BEGIN " in text:
        # Keep private key blocks only; a bundle of certificates is public.
        for i, block in enumerate(m for m in _PEM.finditer(text) if "PRIVATE KEY" in m.group(1)):
            yield (f"#{i}" if i else ""), block.group(0)
        return
    if "\n" in text:
        yield from config_values(text, key)
        return
    yield "", value


def config_values(text: str, name: str) -> Iterator[tuple[str, str]]:
    """A config file held in a Secret, read like a dump: only settings whose name says credential
    (`password`, `token`, `client_secret`) and URLs with a password; the rest of a config file is
    settings (`log_level`, a description), and a host or user name stays visible."""
    for sid, value in text_values(text, name, env=False):
        setting = sid.rpartition(":")[2]
        if secret_field(setting) is not None or _URL_PASSWORD.search(value):
            yield f":{setting}", value


def _leaves(doc: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _leaves(v, f"{path}.{k}" if path else str(k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _leaves(v, f"{path}[{i}]")
    elif isinstance(doc, str):
        yield from ((path + suffix, c) for suffix, c in _candidates(path, doc))


def _docker(value: str) -> Iterator[tuple[str, str]]:
    try:
        doc = json.loads(value)
    except ValueError:
        return
    auths = doc.get("auths", doc) if isinstance(doc, dict) else {}
    for n, entry in enumerate(auths.values() if isinstance(auths, dict) else ()):
        if not isinstance(entry, dict):
            continue
        for name in _DOCKER_FIELDS:
            field = entry.get(name)
            if isinstance(field, str) and field:
                yield f".{n}.{name}", field
        auth = entry.get("auth")
        decoded = _decode(auth) if isinstance(auth, str) else None
        if decoded and ":" in decoded:
            yield f".{n}.auth-password", decoded.split(":", 1)[1]
