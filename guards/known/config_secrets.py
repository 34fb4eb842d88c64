"""What is secret in a config file kept where secrets live (a Kubernetes Secret's `config.yaml`, `.netrc`,
`.pgpass`, Maven's `settings.xml`, `application.properties`, JSON with comments, an OpenVPN profile).

Private key blocks (`-----BEGIN … PRIVATE KEY-----`, OpenVPN's `Static key`) are values of their own, and
the rest of the file is read too: a config that holds a CA certificate holds a password beside it. Then
every reading the file's shape allows, each through `setting_values` (by the setting's name):
`name: value` / `name = value` lines (quotes and inline comments off), `name=value` parts inside a line
(`?password=`, `Pwd=`, an XML attribute), netrc's `password` token, a pgpass line's last field, an XML
element named as a credential. Only settings named as credentials and values holding a password are read:
the rest of a config file is settings (`log_level`, a description), and a host or user name stays visible.
"""

from __future__ import annotations

import itertools
import re
import shlex
from collections.abc import Iterator

from muninn.guards.known.secret_values import text_values
from muninn.guards.known.setting_values import credential_key, embedded, setting_values

_BLOCK = re.compile(r"-----BEGIN ([^\n-]+)-----[\s\S]*?-----END \1-----")
_NETRC = re.compile(r"(?m)^\s*(?:machine\s+\S+|default\b)")
# host:port:database:user:password, `*` for any of the first four.
_PGPASS = re.compile(r"^\s*[^\s:#][^\s:]*:(?:\d+|\*):[^\s:]+:[^\s:]+:(\S.*?)\s*$")
# What a setting's name looks like (`password`, `Root Password`, `spring.datasource.password`, `"apiSecret"`):
# not a sentence or markup before a colon.
_SETTING_NAME = re.compile(r"[\w.\-\[\]/]+(?: [\w.\-]+){0,2}")
_XML = re.compile(r"<([A-Za-z][\w.:-]*)(?:\s[^<>]*)?>([^<>\n]+)</\1>")


def private_keys(text: str) -> list[str]:
    """The private key blocks of `text`, each line unindented (a YAML block scalar indents them)."""
    return ["\n".join(line.strip() for line in m.group(0).splitlines()) for m in _BLOCK.finditer(text)
            if "PRIVATE KEY" in m.group(1).upper() or "STATIC KEY" in m.group(1).upper()]


def config_values(text: str, name: str) -> Iterator[tuple[str, str]]:
    """(id suffix, value) of the secrets of a config file's text, filtered."""
    for i, block in enumerate(private_keys(text)):
        yield (f"#{i}" if i else ""), block
    rest = _BLOCK.sub("", text)
    seen: set[str] = set()

    def emit(setting: str, value: str) -> Iterator[tuple[str, str]]:
        for suffix, kept in setting_values(setting, value):
            if kept not in seen:
                seen.add(kept)
                yield f":{setting}{suffix}", kept

    for sid, value in text_values(rest, name, env=False):
        setting = sid.rpartition(":")[2]
        if _SETTING_NAME.fullmatch(setting) and (credential_key(setting) or embedded(value)):
            yield from emit(setting, value)
    for line in rest.splitlines():
        for part_name, part in embedded(line):
            yield from emit(part_name, part)
        if m := _PGPASS.match(line):
            yield from emit("password", m.group(1))
        for m in _XML.finditer(line):
            if credential_key(m.group(1)):
                yield from emit(m.group(1), m.group(2).strip())
    if _NETRC.search(rest):
        for setting, value in _netrc(rest):
            yield from emit(setting, value)


def _netrc(text: str) -> Iterator[tuple[str, str]]:
    try:
        tokens = shlex.split(text, comments=True)
    except ValueError:   # an unclosed quote: read no further than the lines did
        return
    for token, value in itertools.pairwise(tokens):
        if token in ("password", "passwd"):
            yield "password", value
