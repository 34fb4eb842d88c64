"""Lines of credential files and configs whose format says where the secret stands, with no label word:

- `.pgpass`: `host:port:database:user:password` (a port or `*` second, five fields);
- SNMP communities: `snmp-server community <c> RO|RW` (Cisco, Arista), `rocommunity <c>` (net-snmp's
  snmpd.conf), `community: <c>` / `community = <c>` / `community string <c>`, `snmpwalk … -c <c>`;
- `ipsec.secrets` / strongSwan: `<ids> : PSK "<value>"`, `: XAUTH "<value>"`, `: EAP "<value>"`;

SNMP's well-known defaults (`public`, `private`) are not secrets and stay. PPP's `chap-secrets` rows are not
read: the Debian handbook's PPTP example (`vpn pptp <value> *`) would be redacted in every translation.

    for start, end in find(text): ...
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from muninn.guards.rules import looks_random

_PGPASS = re.compile(r"^[ \t]*(?:[\w.*-]+|\[[0-9a-fA-F:]+\]):(?:\d{1,5}|\*):[^\s:]+:[^\s:]+:"
                     r"(?P<secret>[^\s]+?)[ \t]*\r?$", re.MULTILINE)
_COMMUNITY = re.compile(
    r"(?:(?:snmp-server|snmp)[ \t]+community[ \t]+(?!(?:string|name)\b)|(?:ro|rw)community6?[ \t]+"
    r"|community(?:[ \t_-]?(?:string|name))?[ \t]*[:=][ \t]*)[\"']?(?P<secret>[^\s\"',;]+)", re.IGNORECASE)
_SNMP_C = re.compile(r"\bsnmp(?:walk|get|getnext|bulkwalk|bulkget|set|table|trap|check|netstat|df|status)\b"
                     r"[^\n]*?[ \t]-c[ \t]*[\"']?(?P<secret>[^\s\"']+)")
_IPSEC = re.compile(r":[ \t]*(?:PSK|XAUTH|EAP|NTLM|PIN)[ \t]+(?:%[\w]+[ \t]+)?\"(?P<secret>[^\"\n]+)\"")
_HEX4 = re.compile(r"[0-9a-fA-F]{0,4}")
# The format as manuals print it (`hostname:port:database:username:password`): documentation, not a value.
_TEMPLATE = frozenset({"password", "passwd", "pass", "secret", "*", "<password>", "mypassword", "yourpassword"})
_DEFAULTS = frozenset({"public", "private", "<community>", "community", "string", "name", "none"})


def find(text: str) -> Iterator[tuple[int, int]]:
    if text.count(":") >= 4:
        for m in _PGPASS.finditer(text):
            fields = m.group(0).strip().split(":")
            if m.group("secret").lower() in _TEMPLATE or len(m.group("secret")) < 4 \
                    or all(_HEX4.fullmatch(f) for f in fields):   # an IPv6 address, not a pgpass line
                continue
            yield m.span("secret")
    lowered = text.lower()
    if "community" in lowered:
        for m in _COMMUNITY.finditer(text):
            value = m.group("secret")
            if value.lower() in _DEFAULTS or value.startswith(("$", "<", "{")):
                continue
            if m.group(0).lower().startswith("community") and not looks_random(value, 6):
                continue   # "Community: Debian" in prose; a bare `community:` key needs a made-up value
            yield m.span("secret")
    if "snmp" in lowered:
        for m in _SNMP_C.finditer(text):
            if m.group("secret").lower() not in _DEFAULTS and not m.group("secret").startswith(("$", "<", "{")):
                yield m.span("secret")
    if '"' in text:
        for m in _IPSEC.finditer(text):
            yield m.span("secret")
