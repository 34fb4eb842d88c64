"""The leak gate's own reading of undeclared secrets (guards/gate/leak_gate.py calls it): a guess model.

The redactor's detector (guards/undeclared/detect.py) decides by hand-written shape rules (character
classes, class changes, entropy per character, `ordinary_words`) and structural context. A second opinion
that used the same method would share its blind spots, so this one decides differently: a value is a
secret when it is *hard to guess*, by zxcvbn's estimate of the guesses an attacker needs (dictionary
words in several lists, names, dates, keyboard walks, repeats, sequences and l33t spellings all make a
value cheap; only what none of them explains is costly). Where to look is given by a cue (the tables
below, written for the gate apart from the redactor's word and option tables): a credential word in
front, an identifier naming a secret, an option that takes one, a cell under a credential header, a
lone line under a credential heading, a `send` after a password prompt, a login beside it. Each kind
of cue has its own bar (`BARS`); a value with no cue at all must hold a long run that is nearly all
guesses (`BARE_RUN`, `BARE_DENSITY`).

What the gate flags after redaction is a miss of the redactor, and the file is dropped: the bars are
set so that ordinary text (manuals, notes, the repo's docs) flags nothing (evals/results/security_round4.md).
"""

from __future__ import annotations

import base64
import binascii
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator
from functools import cache, lru_cache
from itertools import pairwise

import ahocorasick_rs
from zxcvbn import zxcvbn
from zxcvbn.frequency_lists import FREQUENCY_LISTS

RULE = "undeclared-secret"

# --- cues: where a secret would stand (the guess model decides whether one does) ---------------------

# Credential words, lower case, in the languages notes are written in. A word here names the value
# after it; `key` alone is too common (`key id`, `sort key`) and needs a qualifier in front of it.
WORDS = (
    "password", "passwd", "passphrase", "passcode", "pw", "passwort", "kennwort", "wlan-schlüssel", "wlan-key",
    "mot de passe", "mdp", "contraseña", "contrasena", "clave", "senha", "wachtwoord", "lösenord", "losenord",
    "adgangskode", "passord", "salasana", "hasło", "haslo", "heslo", "jelszó", "jelszo", "parola", "lozinka",
    "geslo", "пароль", "şifre", "sifre", "κωδικός", "密码", "密碼", "口令", "パスワード", "비밀번호", "mật khẩu",
    "kata sandi", "pin", "psk", "secret", "token", "credential", "credentials", "api key", "api-key",
    "apikey", "access key", "secret key", "private key", "wi-fi key", "wifi key", "wpa key", "wpa2 key",
    "network key", "auth key", "license key", "recovery codes", "recovery code", "backup codes",
    "scratch codes", "2fa codes", "one-time codes", "wiederherstellungscodes",
    # The forms a label takes inside a sentence (issue 47 round 4), spelled out here for the gate alone: the
    # definite, genitive and possessive forms a word boundary would not reach from the stems above.
    "lösenordet", "losenordet", "passordet", "kodeordet", "adgangskoden", "salasanan", "wachtwoorden",
    "şifresi", "sifresi", "şifreniz", "parolası", "parolă", "hasła", "hasłem", "hesla", "heslem", "gesla",
    "lozinke", "lozinku", "šifra", "šifru", "jelszava", "jelszavát", "slaptažodis", "slaptažodį", "salasõna",
    "parool", "fjalëkalimi", "пароля", "паролем", "паролата", "парола", "гасло", "лозинка", "κωδικό",
    "κωδικού", "συνθηματικό", "סיסמה", "סיסמא", "كلمة المرور", "كلمة السر", "رمز عبور", "รหัสผ่าน",
    "kata laluan", "pasahitza", "contrasenya", "contrasinal", "wagwoord", "geheimzahl", "pincode", "pin-code",
    "notfallcodes", "notfall-codes", "backup-codes", "kody zapasowe", "codes de secours", "códigos de respaldo",
    "códigos de recuperación", "codici di backup", "резервные коды", "yedek kodlar", "varakoodit",
    "reservkoder", "återställningskoder", "herstelcodes", "community", "snmp community",
)
_WORD_ALT = "|".join(sorted((re.escape(w) for w in WORDS), key=len, reverse=True))
# A word ends where no letter follows; in front, no letter either, but an identifier's prefix
# (`PGPASSWORD`, `ansible_become_pass`, `DB_TOKEN`) joins on for the words that end identifiers.
CUE = re.compile(rf"(?<![^\W_])(?:{_WORD_ALT})(?![^\W\d_])", re.IGNORECASE)
# An identifier that names a secret (an env var, a YAML or INI key, a URL parameter): a credential word
# ends it (`PGPASSWORD`, `ansible_become_pass`, `DB_TOKEN`, `REDISCLI_AUTH`). One that goes on names a
# property of the secret (`secret_name`, `token_ttl`, `password_encryption`), not the secret.
IDENT = re.compile(r"(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_.-])*(?:[A-Za-z0-9]*(?:password|passwd|passphrase|pwd|secret"
                   r"|token|apikey|pass)|[A-Za-z0-9]+_auth|psk|pin)(?![\w.-])", re.IGNORECASE)
# Words in a prompt that asks for a secret (`expect "*assword:*"`): any case, inside a word too.
PROMPT = re.compile(r"assword|asswort|passphrase|kennwort|\bpin\b|secret|token", re.IGNORECASE)
# Names that stand for a login, in a table row or in front of ` / `.
USERS = frozenset({"admin", "administrator", "root", "user", "username", "login", "sa", "postgres", "ubuntu",
                   "debian", "pi", "ec2-user", "deploy", "ops", "guest", "operator", "service"})
USER_HEADERS = frozenset({"user", "username", "login", "account", "benutzer", "utilisateur", "usuario", "konto"})

# Programs whose short option takes the password (their manuals), and the options that always do.
SHORT_PASSWORD = {
    "-p": ("mysql", "mysqldump", "mariadb", "mariadb-dump", "sshpass", "mongosh", "mongo", "mongodump",
           "mongorestore", "docker", "podman", "twine", "az", "rdesktop", "cqlsh", "7z", "buildah", "skopeo",
           "nerdctl", "helm", "oc"),
    "-P": ("ipmitool", "sqlcmd", "zip", "unzip", "bcp", "isql"),
    "-a": ("redis-cli",),
    "-w": ("ldapsearch", "ldapmodify", "ldapadd", "ldapdelete", "ldappasswd", "ldapwhoami", "ldapcompare",
           "ldapmodrdn", "ldapexop"),
    "-s": ("ldappasswd",),
    "-A": ("snmpwalk", "snmpget", "snmpset", "snmpbulkwalk", "snmptrap"),
    "-X": ("snmpwalk", "snmpget", "snmpset", "snmpbulkwalk", "snmptrap"),
    "-N": ("ssh-keygen",),
    "-k": ("ncat",),
}
# Long options, in any program: a word of the option names the secret.
LONG_OPTION = re.compile(r"(?<![\w-])--?(?:[a-z0-9]+-)*(?:password|passwd|passphrase|pass|token|secret|storepass"
                         r"|keypass|srcstorepass|deststorepass|api-key|apikey|auth-token|access-token)(?![\w-])",
                         re.IGNORECASE)
# `user%pass` (smbclient, rpcclient), `user,pass` (lftp -u), `user:pass` (curl -u, chpasswd), `pass:VALUE`
# (openssl), `/p:VALUE` (xfreerdp): the value after the joiner.
JOINED = re.compile(r"(?:(?<![\w-])-U[ \t=]*|--user[= ]|(?<![\w-])-u[ \t=]+|--proxy-user[= ])['\"]?[\w.@-]+[%:,]"
                    r"|(?<![\w-])-pass(?:in|out)?[ \t]+pass:|(?<![\w-])/p:",
                    re.IGNORECASE)

# log10 of the guesses a value must cost, by what points at it: the weaker the cue, the higher the bar. A
# value must hold a digit and a letter, and not be a version, path, placeholder or e-mail, before it is weighed.
BARS = {
    "label": 5.0,      # `password: …`, `the passphrase, …, is`, `PGPASSWORD=…`
    "spaced": 7.0,     # `passphrase Garten7458+`: a label with only a space after it
    "option": 6.0,     # `sshpass -p …`, `--password=…`, `-U alice%…`
    "column": 5.0,     # a cell under a `password` header
    "under": 6.0,      # a lone line under `Recovery codes:`, `password: >-`
    "send": 6.0,       # `send "…\r"` after an `expect "*assword:*"`
    "apposition": 8.0,  # `the passphrase, tangerine-orbit-5521, is …`: a comma is a weaker tie than a colon
    "user": 12.0,      # `x86_64 / aarch64`, a cell in a row with a login in it: no word for a secret at all
    "user-chosen": 6.0,  # the same with a symbol among letters and digits, or their case flipping throughout
}
BARE_LENGTH = 20        # a token no cue points at is read from this length on ...
BARE_RUN = 16           # ... with a run this long between separators
BARE_DENSITY = 0.85     # log10(guesses) per character: random alphanumerics score 1.0, words far less
BARE_WORDLIKE = 0.75    # ... and fewer of its letter pairs common in words than this share (`_wordlike`)
BARE_FLIPS = 0.5        # ... or upper, lower and digits alternating at this share of its characters
_COMMON_SHARE = 0.95    # the common letter pairs: those that make up this share of the word lists' pairs
_MAX_GUESSED = 40       # zxcvbn is quadratic in length: a longer value is judged by its first 40 characters

_MARKER = re.compile(r"\[REDACTED:[^\]\n]*\]")
_PUBLIC_BLOCK = re.compile(r"-----BEGIN (?!.*PRIVATE)[^\n]*-----[\s\S]*?-----END[^\n]*-----")
_VALUE = re.compile(r"[^\s`'\"|<>()\[\]{},;]+")
_QUOTED = re.compile(r"\"([^\"\n]{4,})\"|'([^'\n]{4,})'")
# Between a label and its value: decoration, then one separator, or (spaced) none.
_GAP = re.compile(r"(?:s|es)?[*`'\")\]]*[ \t]*(?P<sep>:=|=>|->|[:=：|,→—]|(?<=[ \t])(?:is|ist|est|es|är|er|jest|je"
                  r"|lautet|was|è|é|to|on|ir|yra|este|adalah|là|είναι|е|это|blev|var)(?=[ \t]))?[ \t*_`'\"(«„“]*",
                  re.IGNORECASE)
# `for the router`, `für das NAS`, `de la box`: what the secret is for, between the word and its colon (not a
# compound such as `PSK mode:` or `password policy:`, which names a setting).
_NAMED_FOR = re.compile(r"[ \t]+(?:for|für|fürs|zum|zur|bei|auf|pour|de|du|des|para|per|van|voor|för|til|till|dla"
                        r"|do|of|on|to|at|у|для|от|до|k|na|za|del|della|di|dei|da|do|του|της|için|ke)[ \t]"
                        r"[^:：.;!?=|\n]{1,40}?(?:[:：]|[ \t](?:is|est|ist|lautet|es|è|é|är|er|je|to|e|este|είναι|е)"
                        r"(?=[ \t]))[ \t*_`'\"«„“]*", re.IGNORECASE)
_IDENT_GAP = re.compile(r"['\"]?[ \t]*(?::=|[:=：])[ \t]*[\"']?")
# A cheap first look for a line worth reading (one Aho-Corasick pass): a credential word, or the part
# of one an identifier holds (`PGPASSWORD`, `api_token`, `MYSQL_PWD`).
_NEEDLES = sorted({w.lower() for w in WORDS} | {"pass", "assw", "pwd", "secret", "token", "auth", "psk", "pin",
                                                 "apikey"})
_CUE_FINDER = ahocorasick_rs.AhoCorasick(_NEEDLES)
_SURROGATE = re.compile("[\ud800-\udfff]")
_OPTIONISH = re.compile(r"(?<![\w-])-{1,2}[A-Za-z]|/p:|chpasswd", re.IGNORECASE)
_BLOCK_SCALAR = re.compile(r"[:：]\s*[|>][-+]?\s*$")
_TABLE_LINE = re.compile(r"^[ \t]*\|", re.MULTILINE)
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_SEND = re.compile(r"^\s*(?:exp_send|send|\w+\.send(?:line)?)\b[ \t(]*(?:--[ \t]+)?[\"']([^\"'\n]+)[\"']")
_USER_SLASH = re.compile(r"(?<![\S])[\w.@+-]{2,64}[ \t]+/[ \t]+(?P<v>\S+)")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_BARE = re.compile(r"(?<![A-Za-z0-9+/=_~-])[A-Za-z0-9+/=_~-]{20,}(?![A-Za-z0-9+/=_~-])")
_TRAIL = ".,:;)"
_RUN_SPLIT = re.compile(r"[-_.=:~/]+")
_B64 = re.compile(r"[A-Za-z0-9+/]+=*")
_SLUG_SPLIT = re.compile(r"[-_.]")
_FILE_NAME = re.compile(r"\.[a-z]{2,4}$")
_DIGITS = re.compile(r"\d+")

# Values that are never a secret, whatever points at them.
_PLACEHOLDER = re.compile(r"^(?:\$|%|<|\{\{|\*{3,}|x{3,}|\.{3,}|#)|^(?:changeme|redacted|example|secret|password)$",
                          re.IGNORECASE)
_VERSION = re.compile(r"\d+\.\d+")
_VERSION_START = re.compile(r"v?\d+(?:\.\d+)+(?:[-+~]|$)")
_HEX = re.compile(r"[0-9a-fA-F]+")
_SETTING = re.compile(r"[A-Za-z][\w.-]*[=:]")
_SYMBOL = re.compile(r"[^\w.\-/]")
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_DIGEST = re.compile(r"(?:sha\d*|md5|blake2\w*|sha3-\d+)[-:=]", re.IGNORECASE)
_PUBLIC_KEY = re.compile(r"(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-\w+|sk-ssh-\S+)\s+$")
_IPFS = re.compile(r"Qm[1-9A-HJ-NP-Za-km-z]{44}")
_LVM = re.compile(r"[0-9A-Za-z]{6}(?:-[0-9A-Za-z]{4}){5}-[0-9A-Za-z]{6}")


def scan_lines(text: str) -> list[int]:
    """1-based lines holding an undeclared secret, by this module's reading."""
    return sorted({line for line, _, _ in findings(text)})


def findings(text: str) -> list[tuple[int, str, str]]:
    """(1-based line, cue kind, value) for every value this reading calls a secret (for tests and evals)."""
    if "-----BEGIN" in text:
        text = _PUBLIC_BLOCK.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    if "[REDACTED:" in text:
        text = _MARKER.sub("[]", text)
    lines = text.replace("\r", "").split("\n")
    out = []
    for n, kind, value in _slots("\n".join(lines), lines):
        if _secret(value, kind):
            out.append((n + 1, kind, value))
    return out


# --- where to look -------------------------------------------------------------------------------

def _slots(text: str, lines: list[str]) -> Iterator[tuple[int, str, str]]:
    header: dict[int, str] = {}     # column index -> "column" or "user", for the table being read
    under = 0                       # lines left in a run under a credential heading
    prompt = 0                      # lines left after a password prompt
    cue_lines, busy = _busy_lines(text)
    for n, line in enumerate(lines):
        if n not in busy and not (under or prompt or header):
            continue
        if not line.strip():
            under = max(0, under - 1) if under else 0
            continue
        cells = _cells(line)
        if cells is None:
            header = {}
        elif _TABLE_RULE.match(line):
            continue
        cue_here = n in cue_lines
        if cue_here:
            yield from _labelled(n, line)
            if _prompts(line):
                prompt = 4
        if _OPTIONISH.search(line):
            yield from _options(n, line)
        if prompt:
            prompt -= 1
            m = _SEND.match(line)
            if m:
                yield n, "send", _trim(m.group(1).replace("\\r", "").replace("\\n", ""))
        if cells is not None:
            nxt = lines[n + 1] if n + 1 < len(lines) else ""
            if _TABLE_RULE.match(nxt):
                header = {i: k for i, c in enumerate(cells) if (k := _header_kind(c))}
            else:
                yield from _row(n, cells, header)
        if " / " in line:
            for m in _USER_SLASH.finditer(line):
                yield n, "user", _trim(m.group("v"))
        if under and not line.lstrip().startswith(("```", "~~~")):
            under -= 1
            lone = _lone(line)
            if lone is not None:
                yield n, "under", lone
            elif cells is not None:
                for c in cells:
                    if (v := _lone(c)) is not None:
                        yield n, "under", v
            else:
                under = 0
        if cue_here and _heads_values(line):
            under = 12
        for m in _BARE.finditer(line):
            yield from _bare(n, line, m)


def _busy_lines(text: str) -> tuple[set[int], set[int]]:
    """(lines with a cue word, every line worth reading): found over the whole text at once, since a
    regex per line costs more than the reading itself on ordinary prose."""
    starts = [m.end() for m in re.finditer("\n", text)]

    def lines_of(positions: Iterator[int]) -> set[int]:
        return {bisect_right(starts, p) for p in positions}

    lowered = text.lower()
    if len(lowered) != len(text):   # 'İ': lower-casing changed offsets; every line is worth reading
        every = set(range(len(starts) + 1))
        return every, every
    if not lowered.isascii():
        lowered = _SURROGATE.sub("\ufffd", lowered)
    cue = lines_of(s for _, s, _ in _CUE_FINDER.find_matches_as_indexes(lowered, overlapping=True))
    busy = cue | lines_of(m.start() for m in _OPTIONISH.finditer(text)) \
        | lines_of(m.start() for m in _BARE.finditer(text)) | lines_of(m.start() for m in _TABLE_LINE.finditer(text))
    at = text.find(" / ")
    while at >= 0:
        busy.add(bisect_right(starts, at))
        at = text.find(" / ", at + 3)
    return cue, busy


def _heads_values(line: str) -> bool:
    """A line the values under it belong to: `Recovery codes:`, `## Kennwort`, `2FA scratch codes` (a
    title ending in the word), `password: >-` (a YAML block scalar)."""
    s = line.rstrip()
    if _BLOCK_SCALAR.search(s):
        return bool(CUE.search(s) or IDENT.search(s))
    last = None
    for last in CUE.finditer(s):  # noqa: B007 - the last one is wanted
        pass
    if last is None or len(s) > 80:
        return False
    return (s.endswith((":", "：")) or s.lstrip().startswith("#")
            or not s[last.end():].strip(" *_`"))


def _prompts(line: str) -> bool:
    return "expect" in line and bool(PROMPT.search(line))


def _labelled(n: int, line: str) -> Iterator[tuple[int, str, str]]:
    for m in CUE.finditer(line):
        if _in_path(line, m.start()):
            continue   # `…/gcloud_iam_oauth-clients_credentials_create.1.gz` names a file
        gap = _GAP.match(line, m.end())
        if gap is None or gap.end() == m.end():
            continue
        if not gap.group("sep") and (named := _NAMED_FOR.match(line, m.end())):
            # `Passwort für das NAS: Garten7458+`, `password for the router: …`: the label names what it is for
            if value := _value_at(line, named.end()):
                yield n, "label", value
            continue
        sep = gap.group("sep")
        kind = "apposition" if sep == "," else "label" if sep else "spaced"
        value = _value_at(line, gap.end())
        if value:
            yield n, kind, value
    for m in IDENT.finditer(line):
        gap = _IDENT_GAP.match(line, m.end())
        if gap is not None and (value := _value_at(line, gap.end())):
            yield n, "label", value


def _in_path(line: str, at: int) -> bool:
    start = max(line.rfind(" ", 0, at), line.rfind("\t", 0, at), line.rfind("|", 0, at)) + 1
    return "/" in line[start:at] or "\\" in line[start:at]


def _options(n: int, line: str) -> Iterator[tuple[int, str, str]]:
    for m in LONG_OPTION.finditer(line):
        if line[m.end():m.end() + 1] in ("=", " ", "\t"):
            start = m.end() + 1 + len(line[m.end() + 1:]) - len(line[m.end() + 1:].lstrip(" \t"))
            value = _value_at(line, start)
            if value.startswith("pass:"):   # openssl's `-pass pass:…`; `env:`, `file:`, `fd:` name where it is
                value = value[5:]
            if value and not value.startswith("-") and not value.startswith(("env:", "file:", "fd:")):
                yield n, "option", value
    for m in JOINED.finditer(line):
        if value := _value_at(line, m.end()):
            yield n, "option", value
    words = line.split()
    for option, programs in SHORT_PASSWORD.items():
        if option not in line or not any(w.rsplit("/", 1)[-1] in programs for w in words):
            continue
        for i, w in enumerate(words):
            if w == option and i + 1 < len(words):
                if option == "-p" and _takes_db(words):
                    continue
                value = _trim(words[i + 1].strip("'\""))
            elif w.startswith(option) and len(w) > len(option) and option in ("-p", "-P", "-w"):
                value = _trim(w[len(option):].strip("'\""))
            else:
                continue
            if value and not value.startswith("-"):
                yield n, "option", value
    if "chpasswd" in line:
        for m in re.finditer(r"[\w.-]+:([^\s'\"|]+)", line):
            yield n, "option", _trim(m.group(1))


def _takes_db(words: list[str]) -> bool:
    """`mysql -u root -p shop`: a spaced `-p` prompts, the next word is the database."""
    return any(w.rsplit("/", 1)[-1] in ("mysql", "mysqldump", "mariadb", "mariadb-dump", "7z") for w in words)


def _cells(line: str) -> list[str] | None:
    s = line.strip()
    if not s.startswith("|"):
        return None
    return [c.strip() for c in s.strip("|").split("|")]


def _header_kind(cell: str) -> str | None:
    low = cell.strip("*_` ").lower()
    if CUE.search(low):
        return "column"
    return "user" if low in USER_HEADERS else None


def _row(n: int, cells: list[str], header: dict[int, str]) -> Iterator[tuple[int, str, str]]:
    lone = [(i, v) for i, c in enumerate(cells) if (v := _lone(c)) is not None]
    for i, v in lone:
        if header.get(i) == "column":
            yield n, "column", v
    userish = "user" in header.values() or any(
        c.strip("`*_ ").lower() in USERS or _EMAIL.fullmatch(c.strip("`*_ ")) for c in cells)
    if userish:
        for i, v in lone:
            if header.get(i) != "user" and v.lower() not in USERS and not _EMAIL.fullmatch(v):
                yield n, "user", v


def _lone(piece: str) -> str | None:
    """The one word of a line or cell (a bullet, quote, backticks or emphasis around it), else None."""
    s = piece.strip().lstrip("-*+>").strip().strip("`*_").strip()
    s = re.sub(r"^\d{1,2}[.)]\s+", "", s)
    return _trim(s) if s and _VALUE.fullmatch(s) else None


def _value_at(line: str, start: int) -> str:
    q = _QUOTED.match(line, start)
    if q:
        inner = q.group(1) or q.group(2)
        return "" if " " in inner else _trim(inner)
    m = _VALUE.match(line, start)
    return _trim(m.group(0)) if m else ""


def _trim(value: str) -> str:
    value = value.rstrip(_TRAIL)
    return value.strip("*_") if value[:1] in "*_" or value.endswith(("**", "__")) else value


def _bare(n: int, line: str, m: re.Match[str]) -> Iterator[tuple[int, str, str]]:
    value = m.group(0).strip("=-_~")
    before = line[:m.start()]
    if (_DIGEST.search(before[-10:]) or _DIGEST.match(value) or "@sha" in line[max(0, m.start() - 12):m.start()]
            or before.endswith(("data:", "base64,")) or _PUBLIC_KEY.search(before[-48:])):
        return
    if value.startswith("/") and not _base64_blob(value):
        return   # a path: `/var/cache/apache/x/y/TGxSMO2b…` is a file name, however random
    for piece in value.split("/") if "/" in value and not _base64_blob(value) else (value,):
        if len(piece) >= BARE_LENGTH:
            yield n, "bare", piece


def _base64_blob(value: str) -> bool:
    """Base64 whose `/` are its own characters, not a path's (`…/Etc/GMT+1`): long pieces between them."""
    if not _B64.fullmatch(value):
        return False
    pieces = [p for p in value.split("/") if p]
    return sum(map(len, pieces)) >= 12 * len(pieces)


# --- what is a secret --------------------------------------------------------------------------------

def _secret(value: str, kind: str) -> bool:
    if len(value) < 6 or _PLACEHOLDER.search(value) or not any(c.isdigit() for c in value):
        return False
    letters = any(c.isalpha() for c in value)
    if not letters and not (kind == "under" and value.isdigit() and len(value) >= 6):
        return False
    if value.startswith(("/", "~/", "./", "../")) or "://" in value or _EMAIL.fullmatch(value):
        return False
    if _UUID.fullmatch(value) or _IPFS.fullmatch(value) or _LVM.fullmatch(value):
        return False
    if kind == "bare":
        return _random(value)
    if _VERSION_START.match(value) or (_VERSION.search(value) and not any(c in value for c in "!#%&*+@?$")):
        return False   # `nginx-1.25.3`, `v2.4.1-rc3`
    if kind == "spaced" and _SETTING.match(value):
        return False   # `… key exchange Kx=RSA Enc=RC4`: a setting beside the word, not its value
    if kind not in ("option", "send") and (_slug(value) or _FILE_NAME.search(value)):
        return False   # `k8s-prod-eu1`, `sre-oncall-2`, `wifi-home-5g`: a name made of words
    if _HEX.fullmatch(value) and (kind == "user" or (kind == "spaced" and len(value) < 32)):
        return False   # a checksum beside a name
    if kind == "user" and ((_SYMBOL.search(value) and any(c.isalpha() for c in value))
                           or _flips(value) >= BARE_FLIPS * len(value)):
        kind = "user-chosen"
    return guesses(value) >= BARS[kind]


def _slug(value: str) -> bool:
    """Lower-case words joined by `-`, `_` or `.`, numbers in them short: a name someone gave a thing.
    A drawn code has no word in it (`k7x9-m2p4q8`), a passphrase a longer number (`tangerine-orbit-5521`)."""
    parts = _SLUG_SPLIT.split(value)
    return (len(parts) > 1 and value.islower() and all(p.isalnum() for p in parts)
            and all(len(d) <= 2 for d in _DIGITS.findall(value)) and any(p.isalpha() and len(p) >= 3 for p in parts))


def _random(value: str) -> bool:
    """A token nobody points at: a run of 16+ letters and digits in it (separators split words and
    model numbers, not random bodies) mixing upper, lower and digits, nearly every character a guess."""
    if _HEX.fullmatch(value) or value.startswith("AAAA") or _prose_base64(value):
        return False
    runs = _RUN_SPLIT.split(value) if not _base64_blob(value) else [value]
    run = max(runs, key=len)
    if len(run) < BARE_RUN or not (any(c.isdigit() for c in run) and any(c.islower() for c in run)
                                   and any(c.isupper() for c in run)):
        return False   # one case only: bech32 and base32 public names (`age1…`, onion and IPFS ids) are so
    cut = run[:_MAX_GUESSED]
    if guesses(cut) < BARE_DENSITY * len(cut):
        return False
    # zxcvbn lacks the words of identifiers (`libLLVMAArch64AsmParser`): a run of common letter pairs
    # is one, unless its case and digits flip at most characters, as only a drawn token's do.
    return _wordlike(run) < BARE_WORDLIKE or _flips(run) >= BARE_FLIPS * len(run)


def _flips(run: str) -> int:
    kinds = ["u" if c.isupper() else "l" if c.islower() else "d" for c in run]
    return sum(a != b for a, b in pairwise(kinds))


def _wordlike(run: str) -> float:
    """The share of the run's letter pairs that are common in words (the bigrams of zxcvbn's word lists):
    `libLLVMAArch64AsmParser` is made of words the lists lack, but not of letter pairs they lack."""
    low = run.lower()
    pairs = [low[i:i + 2] for i in range(len(low) - 1) if low[i].isalpha() and low[i + 1].isalpha()]
    return sum(p in _common_bigrams() for p in pairs) / len(pairs) if pairs else 0.0


@cache
def _common_bigrams() -> frozenset[str]:
    """The letter pairs that make up most of the letters of zxcvbn's word and name lists."""
    counts: Counter[str] = Counter()
    for name in ("english_wikipedia", "us_tv_and_film", "surnames", "female_names", "male_names"):
        for word in FREQUENCY_LISTS[name]:
            counts.update(a + b for a, b in pairwise(word) if a.isalpha() and b.isalpha())
    total, kept, out = sum(counts.values()), 0, set()
    for pair, n in counts.most_common():
        if kept >= _COMMON_SHARE * total:
            break
        out.add(pair)
        kept += n
    return frozenset(out)


def _prose_base64(value: str) -> bool:
    """Base64 of a sentence (`SGVsbG8sIHRoaXM…`): random to the eye, words to whoever decodes it."""
    body = value.rstrip("=")
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_" if "-" in body or "_" in body else None)
        plain = raw.decode("ascii")
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return False
    return plain.count(" ") >= 2 and sum(c.isalpha() or c in " ,.'!?" for c in plain) >= 0.9 * len(plain)


@lru_cache(maxsize=8192)
def guesses(value: str) -> float:
    """log10 of zxcvbn's estimate of the guesses `value` costs."""
    return float(zxcvbn(value[:_MAX_GUESSED])["guesses_log10"])
