"""muninn's own redaction rules: what detect-secrets misses or finds too late.

One module per rule, each a `Rule` subclass, the way a detect-secrets plugin declares
`secret_type` and `denylist`. The built-in rules go through the same door an outside rule would:
the `register_rules` hook (muninn.guards.plugin lists them).

A rule's `name` is a contract: it is written into redacted files as `[REDACTED:<name>]` and into
leak reports, so renaming one needs a migration.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from typing import ClassVar

MARKER_PREFIX = "[REDACTED:"
# A placeholder is documentation, not a secret: `$DB_PASS`, `${TOKEN}`, `<token>`, `{{ x }}`, `***`.
_PLACEHOLDER = re.compile(r"^(?:\$\{?[A-Za-z_]\w*\}?|<[^>]*>|\{\{.*\}\}|%\w+%|[*xX.•]{3,}|\[REDACTED:.*)$")


def is_placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER.match(value))


def looks_random(value: str, min_length: int = 8) -> bool:
    """The cheap test labelled values must pass: long enough, a letter, and a digit, a symbol or
    a capital after the first character. Keeps `password: rotated yearly` from being redacted."""
    if len(value) < min_length or is_placeholder(value) or not re.search(r"[A-Za-z]", value):
        return False
    return bool(re.search(r"[\d\W_]", value) or re.search(r"[A-Z]", value[1:]))


# What a piece of prose or of a path is made of, between separators. A credential mixes case and
# digits inside one piece (`dXNlcjpwYXNz`, `abc123XYZ`, `8f14e45fceea`) or carries a long digit run
# (`xoxb-123456789012-…`); words, acronyms, short numbers and a word with its version do not.
_SEPARATORS = re.compile(r"[-._/~+=:_]+")
_ORDINARY_PIECE = re.compile(
    r"[a-z]{1,24}|[A-Z][a-z]{1,23}|[A-Z]{1,6}"   # `like`, `Setup`, `HTTP`
    r"|[A-Z]?[a-z]{1,12}[A-Z]{1,5}[a-z]{0,12}"   # one hump of camel case: `macOS`, `PostgreSQL`, `GitHub`
    r"|\d{1,5}"                                  # `2024`, `64`, `443`
    r"|(?:[a-z]{1,8}|[A-Z]{1,5}v?|[A-Z][a-z]{1,7})\d{1,5}[a-z]{0,2}"  # `x86`, `sha256`, `IPv6`, `i18n`, `k8s`
    r"|\d{1,4}(?:[a-z]{1,4}|[A-Z]{1,4})"           # `2fa`, `64bit`, `10GB`, `5xx`
)


def ordinary_words(value: str) -> bool:
    """Whether `value` is prose or a path made of ordinary pieces (`Unix-like`, `Setup/part-1`,
    `x86_64-linux-gnu`, `expired.`), not a credential: every piece between separators is a word,
    a short acronym, a short number or a short word with its version."""
    pieces = [p for p in _SEPARATORS.split(value) if p]
    return bool(pieces) and all(_ORDINARY_PIECE.fullmatch(p) for p in pieces)


def encodes_prose(value: str) -> bool:
    """Whether `value` is base64 of ordinary text (a sentence someone encoded): random to the eye, a
    sentence to anyone who decodes it. A key or token decodes to bytes, not to words and spaces."""
    body = value.rstrip("=")
    if len(body) < 16 or not re.fullmatch(r"[A-Za-z0-9+/_-]+", body):
        return False
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_" if "-" in body or "_" in body else None)
        plain = raw.decode("utf-8")   # prose in any language: a key decodes to bytes that are rarely UTF-8
    except (ValueError, UnicodeDecodeError):
        return False
    wordy = sum(c.isalpha() or c in " ,.'" for c in plain)
    return plain.count(" ") >= 3 and wordy >= 0.9 * len(plain)


# Box-drawing characters as the ASCII a table is drawn with, one character for one (offsets stay): a table
# printed by psql, tabulate, a TUI or a spreadsheet export (`│ user │ password │`, `├───┼───┤`, `╞═══╪═══╡`)
# reads as `| user | password |` and `+---+---+`.
BOX_DRAWING = str.maketrans(
    "│┃║╎╏┆┇┊┋" "─━═╌╍┄┅┈┉" "┌┐└┘├┤┬┴┼╔╗╚╝╠╣╦╩╬╒╓╕╖╘╙╛╜╞╟╡╢╤╥╧╨╪╫┏┓┗┛┣┫┳┻╋",
    "|" * 9 + "-" * 9 + "+" * 45)


# A path's start: `/`, or `~/`, `./`, `../`, `$HOME/` (a start that already says "a file").
_PATH_START = re.compile(r"(?:~|\.\.?|\$\{?[A-Za-z_]\w*\}?)?/")


def names_a_file(value: str) -> bool:
    """Whether `value` is a filesystem path made of ordinary pieces (`/root/.smbcred`, `~/.pgpass`):
    where a secret is kept, not the secret. A bare `/x` needs a second segment: `/Summer2024` is as
    likely a password with a slash in front."""
    start = _PATH_START.match(value)
    if start is None:
        return False
    rest = value[start.end():]
    segments = [s for s in rest.split("/") if s]
    return len(segments) >= (2 if start.end() == 1 else 1) and ordinary_words(rest)


class Rule:
    """A pattern whose group `secret` (or whole match) is redacted.

    Python's `re` scans ~20x faster when a pattern starts with a literal (it skips ahead to that
    literal); a leading `\\b`, lookbehind or IGNORECASE alternation loses that. So patterns
    start with their literal, `boundary` checks the character before the match in code, and
    `lowercase` rules are written in lower case and run over the lower-cased text instead of
    using IGNORECASE.
    """

    name: ClassVar[str]
    patterns: ClassVar[tuple[re.Pattern[str], ...]]
    # Lower-case literals one of which a document must contain for the rule to be worth running.
    # Empty means always run.
    triggers: ClassVar[tuple[str, ...]] = ()
    boundary: ClassVar[bool] = False
    lowercase: ClassVar[bool] = False

    def accept(self, match: re.Match[str], value: str) -> bool:
        return not is_placeholder(value)

    def spans(self, text: str, lowered: str | None = None, *, checked: bool = False) -> Iterator[tuple[int, int]]:
        """(start, end) of each secret; `checked` says the caller already saw a trigger word."""
        lowered = text.lower() if lowered is None else lowered
        if not checked and self.triggers and not any(t in lowered for t in self.triggers):
            return
        haystack = text
        patterns = self.patterns
        if self.lowercase:
            if len(lowered) == len(text):
                haystack = lowered
            else:  # str.lower() changed the length (e.g. 'İ'): offsets would not line up
                patterns = self._ignorecase()
        for pattern in patterns:
            group = "secret" if "secret" in pattern.groupindex else 0
            for m in pattern.finditer(haystack):
                if self.boundary and m.start() > 0 and _WORD.match(haystack, m.start() - 1):
                    continue
                start, end = m.span(group)
                if start < end and self.accept(m, text[start:end]):
                    yield start, end

    def _ignorecase(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p.pattern, p.flags | re.IGNORECASE) for p in self.patterns)


_WORD = re.compile(r"[A-Za-z0-9_]")


def all_rules() -> dict[str, Rule]:
    """{name: rule}: the built-in rules (muninn.guards.plugin) and any outside plugin's, from the registry."""
    from muninn.core import registry

    return {name: cls() for name, cls in registry.rules().items()}
