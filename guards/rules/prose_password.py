"""Passwords told in prose or under a label in another language: "the root password was v",
"password → v", "password changed to v", `Passwort: v`, `mot de passe : v`, `contraseña = v`,
`senha: v`, `пароль: v`, `パスワード：v`, `密码：v`.

Prose says `password` far more often than it gives one, so the value must look made up
(`_made_up`: letters and digits, a symbol, or a capital inside, and 6+ characters): "the password
was changed", "password → see vault", "Passwort: im Tresor" stay as they are.
"""

from __future__ import annotations

import re

from muninn.guards.rules import Rule, is_placeholder

LABELS = (
    "password", "passphrase", "passcode", "passwort", "kennwort", "mot de passe", "contraseña", "contrasena",
    "senha", "wachtwoord", "hasło", "haslo", "lösenord", "losenord", "passord", "adgangskode", "salasana",
    "parola", "şifre", "sifre", "heslo", "jelszó", "jelszo", "κωδικός", "пароль", "パスワード", "密码", "密碼",
    "비밀번호", "mật khẩu", "kata sandi",
)
_LABEL = "|".join(re.escape(label) for label in LABELS)
# What joins the label to the value: a colon (also full-width), `=`, an arrow or dash, or a verb
# ("was", "is now", "set to", "ist", "est", "es", "é", "は", "是").
_JOIN = (r"[*_`'\"]*"   # the label's closing bold or quote
         r"(?:[ \t]*(?:[:：=]|->|=>|→|⇒|—|–|-(?=[ \t]))"
         # longest first: "is now" must not stop at "is" and take "now" for the value
         r"|[ \t]+(?:(?:was |has been |is )?(?:set|changed|reset|rotated) to|is now|has been|was|is|now"
         r"|became|becomes|ist|war|est|était|es|era|é|является|это)(?=[ \t])"
         r"|[ \t]*(?:は|是|为|為)"
         r"|[ \t]*,(?=[ \t]))")   # "the passphrase, tangerine-orbit-5521, is on the card": an apposition
_PATTERN = re.compile(
    rf"(?:{_LABEL})"
    # "password for root", "mot de passe de l'admin"
    r"(?:[ \t]+(?:for|of|für|pour|de|para|del|do|da)[ \t]+[^\s:：=]{1,40})?"
    + _JOIN
    + r"[ \t]*[*_`'\"«“„]*[ \t]*(?P<secret>[^\s`'\"|,;<>()\[\]{}«»“”„]+)",
    re.IGNORECASE,   # the label in any case; the value keeps its case for `_made_up`
)
_TRAILING = ".:,。"   # sentence punctuation; `!` and `?` are common inside passwords
# The label and the value side by side, a space or a file name's `-`/`_` between them ("the vpn password
# Pelican-Torch-6610 works", `wifi-passphrase-Garten7458+.md`): only a value that is plainly made up.
_SPACED = re.compile(rf"(?:{_LABEL})[ \t_-]+(?P<secret>[^\s`'\"|,;<>()\[\]{{}}«»“”„]+)", re.IGNORECASE)
_VERSION = re.compile(r"^v?\d+(?:\.\d+)+|^[A-Za-z]+\d*(?:\.\d+)+$")
_EXTENSION = re.compile(r"\.(?:md|txt|markdown|org|rst|adoc|yaml|yml|json)$", re.IGNORECASE)


def _made_up(value: str) -> bool:
    if len(value) < 6 or is_placeholder(value) or value.startswith(("$", "%", "{")):
        return False
    has_letter = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    symbol = any(not c.isalnum() and c not in "-_./" for c in value)
    inner_capital = any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)
    return (has_letter and has_digit) or symbol or inner_capital


def _plainly_made_up(value: str) -> bool:
    """8+ characters of letters and digits with a capital inside or a symbol: `Pelican-Torch-6610`,
    `Garten7458+`; not a version (`v2.1.0`), a path or a plain word with a number (`reset2`)."""
    if len(value) < 8 or is_placeholder(value) or "/" in value or _VERSION.match(value):
        return False
    letters, digits = any(c.isalpha() for c in value), any(c.isdigit() for c in value)
    capital = any(c.isupper() for c in value[1:]) or (value[0].isupper() and any(c.islower() for c in value))
    symbol = any(not c.isalnum() for c in value)
    return letters and digits and (capital or symbol) and not value.isupper()


class ProsePassword(Rule):
    name = "prose-password"
    patterns = (_PATTERN, _SPACED)
    triggers = tuple(dict.fromkeys(label.split()[0] for label in LABELS))

    def spans(self, text: str, lowered: str | None = None, *, checked: bool = False):
        lowered = text.lower() if lowered is None else lowered
        if not checked and not any(t in lowered for t in self.triggers):
            return
        for m in _PATTERN.finditer(text):
            if m.start() > 0 and text[m.start() - 1].isalnum():
                continue   # `mypassword`, `Xpasswort`
            start, end = m.span("secret")
            while end > start and text[end - 1] in _TRAILING:
                end -= 1
            if _made_up(text[start:end]):
                yield start, end
        for m in _SPACED.finditer(text):
            if m.start() > 0 and text[m.start() - 1].isalnum():
                continue
            start, end = m.span("secret")
            if ext := _EXTENSION.search(text, start, end):
                end = ext.start()          # a file name's extension is not part of the value
            while end > start and text[end - 1] in _TRAILING:
                end -= 1
            if _plainly_made_up(text[start:end]):
                yield start, end

