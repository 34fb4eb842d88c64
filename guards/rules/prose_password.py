"""Passwords told in prose or under a label in another language: "the root password was v",
"password → v", "password changed to v", `Passwort: v`, `mot de passe : v`, `contraseña = v`,
`senha: v`, `пароль: v`, `パスワード：v`, `密码：v`; and a passphrase of words ("wifi password: maple orbit
tundra velvet", `_PHRASE`).

Prose says `password` far more often than it gives one, so the value must look made up
(`_made_up`: letters and digits, a symbol, or a capital inside, and 6+ characters): "the password
was changed", "password → see vault", "Passwort: im Tresor" stay as they are.
"""

from __future__ import annotations

import re

from muninn.guards.rules import Rule, is_placeholder, prose_lexicon

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
# A passphrase of words after a clear join: "wifi password: maple orbit tundra velvet", "passphrase is: copper
# lantern drifts north", `passphrase = "violet marble season kettle"`, "crane-velvet-ozone-marsh", a seed phrase
# of 12 or 24 words (`PHRASE_LABELS`): 3 to 24 words that end the line, the sentence, the quote or the code span,
# none of them a word prose is made of (`_PROSE_WORDS`), so "password: see the card on the fridge" and
# "passphrase: must be at least five words long" stay.
_PHRASE_JOIN = (r"[*_`'\"]*(?:[ \t]*(?:[:：=]|->|=>|→)"
                r"|[ \t]+(?:is[ \t]+now|is|was|(?:was[ \t]+|is[ \t]+)?(?:set|changed)[ \t]+to|ist|lautet|est|es|era|é)"
                r"(?:[ \t]*:)?(?=[ \t]))")
# Words that name a secret made of words, besides the password labels: a Wi-Fi key, a wallet's seed phrase
# (12 or 24 words, so up to 24 here).
PHRASE_LABELS = ("wifi key", "wi-fi key", "wlan key", "wlan-schlüssel", "wpa key", "wpa2 key", "network key",
                 "pre-shared key", "preshared key", "psk", "passkey", "pass phrase", "pass-phrase", "seed phrase",
                 "recovery phrase", "mnemonic", "secret phrase", "seed words")
_PHRASE_LABEL = "|".join(re.escape(label) for label in (*PHRASE_LABELS, *LABELS))
_PHRASE = re.compile(
    rf"(?:{_PHRASE_LABEL})(?:[ \t]+(?:for|of|für|pour|de|para)[ \t]+[^\s:：=]{{1,40}})?" + _PHRASE_JOIN
    + r"[ \t]*[*_`]*[ \t]*(?P<q>[\"'«“„]?)[ \t]*"
    r"(?P<secret>[^\W\d_]{2,16}(?:(?:[ \t]+|-)[^\W_]{1,16}){2,23})"
    r"(?=[ \t]*(?:[\"'»”`]|[.!?]?[ \t]*(?:\r?$|\n)|[.!?][ \t]+\S))",
    re.IGNORECASE | re.MULTILINE)
_PROSE_WORDS = frozenset("""
the a an to of in on at by for from with without into onto over under is are was were be been being am it its
this that these those there you your yours we our us they them their he she his her him i me my mine and or nor
but not no none as if then than so such same all any some each every only also just very can cannot could would
should will shall may might must do does did done has have had get got see ask use used set unset change changed
reset enter type choose pick leave keep stored saved kept shared sent given found written printed listed shown
managed rotated generated required needed known unknown empty blank default prompted twice once when where which
who what how why whatever please note check contact via per about after before until since below above following
previous next new old usual different optional least most more less long short strong weak case sensitive
password passwords passphrase passphrases secret key token pin code login user account admin root vault file
der die das den dem des ein eine einen ist sind im auf mit von zu und oder nicht kein keine siehe steht liegt
le la les un une est dans sur avec du et ou pas voir el los las es en con y ver
""".split())
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


_LOWER = tuple(re.compile(p.pattern, p.flags & ~re.IGNORECASE) for p in (_PATTERN, _SPACED, _PHRASE))


def _passphrase(value: str) -> bool:
    words = re.split(r"[ \t]+|-", value.lower())
    if sum(not w.isdigit() for w in words) < 3 or len(words) > 24:   # 3+ words; a number may stand among them
        return False
    return not any(w in _PROSE_WORDS for w in words) \
        and not (words[0].endswith(("ed", "ly")) and len(words[0]) > 4)   # "rotated yearly …", "randomly …"


class ProsePassword(Rule):
    name = "prose-password"
    patterns = (_PATTERN, _SPACED, _PHRASE)
    # Always run: the lexicon's labels (prose_lexicon.py) share no literal; its own patterns filter.
    triggers = ()
    _words = tuple(dict.fromkeys(label.split()[0] for label in (*LABELS, *PHRASE_LABELS)))

    def spans(self, text: str, lowered: str | None = None, *, checked: bool = False):
        lowered = text.lower() if lowered is None else lowered
        # Every language's labels, in the three orders a sentence puts label and value (prose_lexicon.py).
        yield from prose_lexicon.spans(text, _made_up, _plainly_made_up, lowered)
        if not any(t in lowered for t in self._words):
            return
        # The patterns ignore case: over the lower-cased text without IGNORECASE they run far faster (the
        # values are read from `text` at the same offsets); when lower-casing changed the length, as written.
        same = len(lowered) == len(text)
        haystack = lowered if same else text
        pattern, spaced, phrase = _LOWER if same else (_PATTERN, _SPACED, _PHRASE)
        for m in pattern.finditer(haystack):
            if m.start() > 0 and text[m.start() - 1].isalnum():
                continue   # `mypassword`, `Xpasswort`
            start, end = m.span("secret")
            while end > start and text[end - 1] in _TRAILING:
                end -= 1
            if _made_up(text[start:end]):
                yield start, end
        for m in spaced.finditer(haystack):
            if m.start() > 0 and text[m.start() - 1].isalnum():
                continue
            start, end = m.span("secret")
            if ext := _EXTENSION.search(text, start, end):
                end = ext.start()          # a file name's extension is not part of the value
            while end > start and text[end - 1] in _TRAILING:
                end -= 1
            if _plainly_made_up(text[start:end]):
                yield start, end
        for m in phrase.finditer(haystack):
            if m.start() > 0 and text[m.start() - 1].isalnum():
                continue
            if _passphrase(m.group("secret")):
                yield m.span("secret")

