"""A password or PIN told in a sentence, in any of the languages of guards/undeclared/lexicon.py, in the
three orders a sentence puts them in (the prose-password rule calls `spans`):

- label first, a few words about what it opens, then the value: "Le mot de passe du routeur est « v »",
  "hasło do serwera to v", "Lösenordet till routern är v", "sunucu şifresi: v", "the PIN is 4711";
- value first: "v is the vpn password", "4711 ist die PIN";
- a question naming the label and its answer: "what's the db password? — v", or the answer on the next line.

The value must look made up (`prose_password._plainly_made_up`, a capital or symbol among letters and
digits), or, for a PIN, be 4 to 12 digits: "the password of the NAS is in the vault", "PIN code reset
procedure" and "GPIO pin 18" stay as they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache

import ahocorasick_rs

from muninn.guards.undeclared.lexicon import (
    AMBIGUOUS_COPULAS,
    BEFORE_COPULA,
    COPULA,
    PASSWORD,
    PASSWORD_WORDS,
    PIN,
    PIN_WORDS,
)

_VALUE = r"[^\s`'\"|,;<>()\[\]{}«»“”„「」]+"
_QUALIFIER = r"(?:[ \t]+[^\s:：=.,;!?«»\"“”„()<>|]{1,30}){0,4}?"
_JOIN = rf"(?:[ \t]*(?:[:：=]|->|=>|→|—|–)|[ \t]+(?:{COPULA})(?=[ \t«\"“„']))"
_OPEN = r"[ \t]*[*_`'\"«“„「]*[ \t]*"
_LABEL_FIRST = re.compile(rf"(?P<label>{PASSWORD})(?P<q>{_QUALIFIER})(?P<join>{_JOIN}){_OPEN}(?P<secret>{_VALUE})",
                          re.IGNORECASE)
_DIGITS = r"\d{4,12}|\d{2,4}(?:[ -]\d{2,4}){1,3}"
# A PIN's label, up to three words about what it opens ("Geheimzahl der EC-Karte", "PIN for the safe"),
# a join (needed after those words), then 4 to 12 digits.
_PIN_FIRST = re.compile(
    rf"(?P<label>{PIN})(?P<q>(?:[ \t]+[^\s:：=.,;!?\d][^\s:：=.,;!?]{{0,29}}){{0,3}}?)"
    rf"(?P<join>{_JOIN})?[ \t]*[*_`'\"«“„#]*[ \t]*(?P<secret>{_DIGITS})(?![\w]|[.,:/-]\d)", re.IGNORECASE)
# In front of a label: the value, a copula or `=`/`—`, an article and up to three words ("v is the root
# password", "v ist das WLAN-Passwort", "4711 = PIN").
_BEFORE = re.compile(
    rf"(?P<secret>{_VALUE})(?:[ \t]+(?:{BEFORE_COPULA})[ \t]+|[ \t]*[=—–(][ \t]*)"
    r"(?:(?:the|my|our|your|its|a|an|le|la|les|l'|das|der|die|den|el|los|o|il|lo|het|de|den|det)[ \t]*)?"
    r"(?:[^\s:：=.,;!?]{1,30}[ \t]+){0,3}$", re.IGNORECASE)
_VALUE_AT = re.compile(_VALUE)
# What has a PIN, right in front of a lower-case `pin` ("door pin 4821", "sim pin 1234").
_PIN_OWNER = re.compile(r"(?<![^\W_])(?:door|safe|sim|card|bank|atm|phone|mobile|alarm|gate|lock|keypad|locker"
                        r"|debit|credit|garage|bike|tresor|handy|karte|router|wps|bluetooth|voicemail|parental)[ _-]$",
                        re.IGNORECASE)
_ANY_LABEL = re.compile(rf"(?:{PASSWORD})|(?P<pin>{PIN})", re.IGNORECASE)
_ANSWER_START = re.compile(r"[ \t>*_—–-]*(?:(?:a|answer|antwort|réponse|respuesta)[ \t]*[:：.)][ \t]*)?[*_`'\"«“„]*",
                           re.IGNORECASE)
_PIN_VALUE = re.compile(_DIGITS)
_TRAIL = ".:,;!?。)»”"


def _bounded(text: str, start: int, end: int) -> bool:
    """No ASCII letter or digit touches the label (`mypassword`, `spinning`); CJK needs no boundary."""
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return not (before.isascii() and before.isalnum()) and not (after.isascii() and after.isalnum())


def _trim(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1] in _TRAIL:
        end -= 1
    return end


def _prefix(entry: str) -> str:
    """The literal an entry of the lexicon starts with, lower case (`passw(?:o|ö)rt` -> `passw`)."""
    out = ""
    for c in entry:
        if c in "()[]?*+{|\\.":
            return out[:-1] if c in "?*{" else out
        out += c
    return out


@cache
def _starts() -> ahocorasick_rs.AhoCorasick:
    """Where a label may start: one Aho-Corasick pass over the lower-cased text for every entry's literal
    start, then the patterns anchored there (a search with the whole alternation at every position of a
    manual is far slower)."""
    words = {_prefix(e).lower() for e in (*PASSWORD_WORDS, *PIN_WORDS)}
    return ahocorasick_rs.AhoCorasick(sorted(w for w in words if w), matchkind=ahocorasick_rs.MatchKind.Standard)


def spans(text: str, made_up: Callable[[str], bool], plainly: Callable[[str], bool],
          lowered: str | None = None) -> Iterator[tuple[int, int]]:
    lowered = text.lower() if lowered is None else lowered
    if len(lowered) != len(text):
        starts = sorted({m.start() for m in _ANY_LABEL.finditer(text)})   # offsets would not line up
    else:
        starts = sorted({s for _, s, _ in _starts().find_matches_as_indexes(lowered, overlapping=True)})
    for at in starts:
        if at and text[at - 1].isascii() and text[at - 1].isalnum():
            continue
        if (m := _LABEL_FIRST.match(text, at)) and _bounded(text, m.start("label"), m.end("label")):
            start, end = m.start("secret"), _trim(text, *m.span("secret"))
            value = text[start:end]
            # "the password on web-server-01 expired": `on` is Finnish "is" and English "on"
            ambiguous = m.group("join").strip().lower() in AMBIGUOUS_COPULAS and value.lower() == value
            if not ambiguous and not _path(value) and (plainly if m.group("q").strip() else made_up)(value):
                yield start, end
        if (m := _PIN_FIRST.match(text, at)) and _pin_ok(text, m):
            yield m.span("secret")
        if (m := _ANY_LABEL.match(text, at)) and _bounded(text, m.start(), m.end()):
            yield from _before(text, m, plainly)
            yield from _answer(text, m, plainly)


def _pin_ok(text: str, m: re.Match[str]) -> bool:
    """Words after the label need a join ("PIN code reset procedure 2024" has none); `pin 18` is a header's
    pin: a bare lower-case `pin` needs a join or an owner in front ("door pin 4821")."""
    if m.group("q") and not m.group("join"):
        return False
    return _bounded(text, m.start("label"), m.end("label")) and bool(
        m.group("join") or m.group("label") != "pin" or _PIN_OWNER.search(text, max(0, m.start() - 24), m.start()))


def _path(value: str) -> bool:
    """Where a secret is kept (`Arquivo de Senhas: /etc/shadow`), not the secret."""
    return value.startswith(("/", "~/", "./", "../", "$")) or "://" in value


def _value_ok(value: str, pin: bool, plainly: Callable[[str], bool]) -> bool:
    if _path(value):
        return False
    return bool(_PIN_VALUE.fullmatch(value)) if pin else plainly(value)


def _before(text: str, m: re.Match[str], plainly: Callable[[str], bool]) -> Iterator[tuple[int, int]]:
    ls = text.rfind("\n", 0, m.start()) + 1
    lo = max(ls, m.start() - 160)
    b = _BEFORE.search(text, lo, m.start())
    if b is None:
        return
    start, end = b.start("secret"), _trim(text, *b.span("secret"))
    if _value_ok(text[start:end], m.group("pin") is not None, plainly):
        yield start, end


def _answer(text: str, m: re.Match[str], plainly: Callable[[str], bool]) -> Iterator[tuple[int, int]]:
    """A question that names the label ("what's the root password?", "¿cuál es la contraseña?"): the
    answer is what follows its `?` on the line, or the first line after it (blank lines skipped)."""
    le = text.find("\n", m.end())
    le = len(text) if le < 0 else le
    q = text.find("?", m.end(), le)
    if q < 0 and not text.startswith("？", m.end()):
        q = text.find("？", m.end(), le)
        if q < 0:
            return
    pos = q + 1
    rest = text[pos:le]
    if not rest.strip(" \t-—–:>*_"):
        nxt = le + 1
        for _ in range(3):       # up to two blank lines between the question and its answer
            if nxt >= len(text):
                return
            end = text.find("\n", nxt)
            end = len(text) if end < 0 else end
            if text[nxt:end].strip(" \t>"):
                pos, le = nxt, end
                break
            nxt = end + 1
        else:
            return
    a = _ANSWER_START.match(text, pos, le)
    at = a.end() if a else pos
    v = _VALUE_AT.match(text, at, le)
    if v is None:
        return
    start, end = v.start(), _trim(text, *v.span())
    if _value_ok(text[start:end], m.group("pin") is not None, plainly):
        yield start, end
