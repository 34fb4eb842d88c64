"""The values of Kubernetes Secrets, from `kubectl get secrets -o json`: what is secret in them.

Only objects of `kind: Secret` are read: `data` (base64) and `stringData`. What is public is left
out, because a known value is redacted everywhere: a namespace, a CA certificate or a host name in
the known set would vanish from every note that mentions it.
- `ca.crt`, `tls.crt`, `namespace`: public, but for a private key block pasted into one;
- each key through `setting_values` (by its name: a `password` key's short value is kept, a
  `username` or `host` key's value is not, a DSN's password is a value of its own);
- from a `kubernetes.io/dockerconfigjson` (or `.dockercfg`) value, only each registry's password,
  token and `auth` (and the password inside `auth`), never the registry host or the user name;
- a JSON value (a cloud service-account key file, a `_json_key` registry password) is read leaf by
  leaf; a multi-line value that is not JSON as a config file (`config_secrets.config_values`).
Ids are `kube:<context>/<namespace>/<secret>.<key>`; values never appear in a message.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from typing import Any

from muninn.guards.known.config_secrets import config_values, private_keys
from muninn.guards.known.setting_values import setting_values

# Keys whose value is public in every Secret type that has them.
PUBLIC_KEYS = frozenset({"ca.crt", "tls.crt", "namespace", "ca-bundle.crt", "service-ca.crt"})
DOCKER_KEYS = frozenset({".dockerconfigjson", ".dockercfg"})
_DOCKER_FIELDS = ("password", "auth", "identitytoken", "registrytoken")


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
    """(id suffix, value) of what is secret in one key's value, filtered."""
    text = value.strip()
    if key in PUBLIC_KEYS:
        for i, block in enumerate(private_keys(text)):
            yield (f"#{i}" if i else ""), block
        return
    if key in DOCKER_KEYS:
        yield from _docker(value)
        return
    if text[:1] in "{[":
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None
        if isinstance(doc, (dict, list)):
            yield from ((f".{path}", leaf) for path, leaf in _leaves(doc, ""))
            return
    if "\n" in text or "-----BEGIN " in text:
        yield from config_values(text, key)
        return
    yield from setting_values(key, value)


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
                yield from ((f".{n}.{name}{suffix}", v) for suffix, v in _registry_password(name, field))
        auth = entry.get("auth")
        decoded = _decode(auth) if isinstance(auth, str) else None
        if decoded and ":" in decoded:
            password = decoded.split(":", 1)[1]
            yield from ((f".{n}.auth-password{suffix}", v) for suffix, v in _registry_password("password", password))


def _registry_password(name: str, value: str) -> Iterator[tuple[str, str]]:
    """A registry's password as a credential; a `_json_key` one (a key file) leaf by leaf as well, so
    its `private_key` is a value of its own."""
    try:
        doc = json.loads(value) if value.lstrip()[:1] == "{" else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        yield from setting_values("password" if name == "auth" else name, value)
        return
    yield "", value   # `docker login -p` takes the whole key file
    yield from ((f".{path}", leaf) for path, leaf in _leaves(doc, ""))
