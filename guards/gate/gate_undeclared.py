"""The leak gate's own reading of undeclared secrets (guards/gate/leak_gate.py calls it).

Deliberately not the redactor's detector (guards/undeclared/detect.py): a second opinion must not share the
first one's bugs, so this is separate code with its own, narrower reading of the same class. What
it flags after redaction is a detector miss, and the file is dropped. Narrower on purpose: a drop
removes a whole fact from search, so it reads only the high-precision part of the class:

- an AWS-style key id and a 40-character secret on the same line;
- a credential label of another language than English, a separator, and a value of letters and digits;
- a password given to `sshpass -p`, `openssl -pass… pass:`, `smbclient -U user%…`, `lftp -u user,…`,
  `ldap… -w`, or any `--password VALUE`;
- a bare token of 32+ characters mixing upper case, lower case and digits many times over.

tests/test_undeclared.py holds it in agreement with the detector: on every generated case and on
ordinary text, nothing this reads is left by the redactor.
"""

from __future__ import annotations

import re
from itertools import pairwise

RULE = "undeclared-secret"

_KEY_ID = re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z2-7]{16}(?![A-Z0-9])")
_FORTY = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_LABEL = re.compile(
    r"(?<![^\W\d_])(?:passwort|kennwort|wlan-schlüssel|mot de passe|contraseña|contrasena|senha|wachtwoord"
    r"|lösenord|hasło|haslo|heslo|jelszó|salasana|adgangskode|passord|пароль|密码|密碼|パスワード|비밀번호|şifre)"
    r"[*_`'\"]*[ \t]*[:=：][ \t]*[*_`'\"]*(?P<v>[^\s`'\"|<>]{8,})", re.IGNORECASE)
_OPTION = re.compile(
    r"(?:sshpass(?:[ \t]+-[a-z]\S*)*?[ \t]+-p[ \t]*|-pass(?:in|out)?[ \t]+pass:|[ \t]-U[ \t]+[\w.@-]+%"
    r"|lftp\b[^\n|;]*?[ \t]-u[ \t]+[\w.@-]+,|ldap\w+\b[^\n|;]*?[ \t]-w[ \t]+|--password[ \t]+)"
    r"(?P<v>[^\s'\"$`<>;|&]{3,})")
_BARE = re.compile(r"(?<![A-Za-z0-9+/=_:-])[A-Za-z0-9_-]{32,}(?![A-Za-z0-9+/=_-])")
_IPFS = re.compile(r"Qm[1-9A-HJ-NP-Za-km-z]{44}")
_LVM = re.compile(r"[0-9A-Za-z]{6}(?:-[0-9A-Za-z]{4}){5}-[0-9A-Za-z]{6}")
_PUBLIC_KEY = re.compile(r"(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-\w+|sk-ssh-\S+)\s+$")
_HEX_ONLY = re.compile(r"[0-9a-fA-F]+")
_PLACEHOLDER = re.compile(r"(?:x{3,}|\*{3,}|\.{3,}|password|passwort|secret|changeme)", re.IGNORECASE)


def _mixed(value: str, least: int, digits_least: int | None = None) -> bool:
    upper = sum(c.isupper() for c in value)
    lower = sum(c.islower() for c in value)
    digits = sum(c.isdigit() for c in value)
    return min(upper, lower) >= least and digits >= (least if digits_least is None else digits_least)


def _flips(value: str) -> int:
    kinds = ["u" if c.isupper() else "l" if c.islower() else "d" if c.isdigit() else "o" for c in value]
    return sum(a != b for a, b in pairwise(kinds))


def _plausible(value: str) -> bool:
    return (not value.startswith("[REDACTED:") and not _HEX_ONLY.fullmatch(value)
            and not _PLACEHOLDER.fullmatch(value) and any(c.isdigit() for c in value)
            and any(c.isalpha() for c in value))


def scan_lines(text: str) -> list[int]:
    """1-based lines holding an undeclared secret, by this module's reading."""
    if "-----BEGIN" in text:
        text = re.sub(r"-----BEGIN (?!.*PRIVATE)[^\n]*-----[\s\S]*?-----END[^\n]*-----", "", text)
    out: set[int] = set()
    for n, line in enumerate(text.split("\n"), 1):
        if "[REDACTED:" in line and len(line) < 60:
            continue
        if _KEY_ID.search(line) and any(_mixed(m.group(0), 2, 1) for m in _FORTY.finditer(line)):
            out.add(n)
            continue
        for pattern in (_LABEL, _OPTION):
            if any(_plausible(m.group("v")) for m in pattern.finditer(line)):
                out.add(n)
        for m in _BARE.finditer(line):
            v = m.group(0)
            if (_mixed(v, 4) and _flips(v) >= len(v) // 2 and "sha" not in line[max(0, m.start() - 8):m.start()]
                    and not _PUBLIC_KEY.search(line, 0, m.start()) and not _IPFS.fullmatch(v)
                    and not _LVM.fullmatch(v)):
                out.add(n)
    return sorted(out)
