"""The undeclared-secret detector: credentials nobody put in a secrets file.

    for f in find(text): f.start, f.end, f.why      # why: the class that decided it

Candidates are found by shape (length, character classes, class changes, entropy per character; not
a word, not an identifier shape) and decided with context:

- **credential-option**: a program's option that takes a secret (guards/undeclared/credential_options.py);
- **credential-line**: a line whose format says where its secret is: `.pgpass`, an SNMP community, an
  `ipsec.secrets` PSK (guards/undeclared/credential_lines.py);
- **labelled**: a label word in front of it, in any of several languages, or its table column's header (a
  markdown, `+---+` or box-drawn table, psql's output, one aligned by spaces under a dashed rule, or a
  delimited one: CSV, TSV, `a;b`, `a|b`),
  or a heading or `Label:` line right above a value that stands alone;
- **vendor-pair**: a vendor's key id (`AKIA…`) on the line or next to it, or a vendor name on the line;
- **user-password**: `user / value`, or `user:value` on a line that speaks of logins or with a login's
  own name (`root:value`, `admin:value`);
- **bare-token**: random enough to need no context (upper, lower and digits, 20+ characters).

Identifiers survive: pure hex (commit SHAs, checksums, GPG fingerprints) unless a label or vendor
shares its line or table cell; UUIDs, digests named by their algorithm (`sha256:`, `sha256=`,
`sha384-`), ARNs, generated Kubernetes names, IPFS ids, public keys and certificates always do.

The leak gate reads the same class with its own code (guards/gate/leak_gate.py, `_undeclared`);
tests/test_undeclared.py holds the two in agreement.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import pairwise

import ahocorasick_rs

from muninn.guards.rules import (
    BOX_DRAWING,
    encodes_prose,
    is_placeholder,
    looks_random,
    names_a_file,
    ordinary_words,
)
from muninn.guards.undeclared import credential_lines, credential_options
from muninn.guards.undeclared.credential_words import (
    ARN,
    DIGEST_PREFIX,
    FILE_PATH,
    HEX,
    IPFS_CID,
    K8S_NAME,
    KEY_IDS,
    LABELS,
    LOGIN_NAMES,
    LVM_UUID,
    NOT_LABELS,
    PUBLIC_BLOCK,
    PUBLIC_KEY_WORD,
    USER_LABELS,
    UUID,
    VENDORS,
)

RULE = "undeclared-secret"
CLASSES = ("credential-option", "credential-line", "labelled", "vendor-pair", "user-password", "bare-token")
STRONG_MIN = 20

_MARKER = re.compile(r"\[REDACTED:[^\]\n]*\]")
# A token: what a note separates by spaces, table bars, quotes, brackets and commas.
_TOKEN = re.compile(r"[^\s|`'\"<>()\[\]{},;]{6,}")
_TRAIL = ".,:;!?)"
# Between a label and its value: decoration, then a separator (or none: `api key 0a1b…`).
_GAP = re.compile(r"[\s*_`'\"\])]*(?:[:=|>：]|:=|=>|->|→|–|—|-|\s(?:is|ist|est|es|är|er|jest|je|è|é|era|was)\s)?"
                  r"[\s*_`'\"\[(]*", re.IGNORECASE)
_SEPARATOR = re.compile(r"[:=|>：→–—-]|\s(?:is|ist|est|es|är|er|jest|je|è|é|era|was)\s", re.IGNORECASE)
# A permission string, as `ls -l` prints it beside `/etc/shadow` or a private key in a table.
_FILE_MODE = re.compile(r"[-dlcbps][-r][-w][-xsS][-r][-w][-xsS][-r][-w][-xtT][.+@]?")
_HEADING = re.compile(r"^\s{0,3}(?:#{1,6}\s|\*\*[^*]+\*\*\s*:?\s*$)|^[^\n]{1,60}[:：]\s*$")
_VERSION = re.compile(r"\d+\.\d+")
DISK_ID = re.compile(r"(?:ata|scsi|nvme|usb|wwn|virtio|mmc|dm-name|dm-uuid|md-uuid|lvm-pv-uuid|ieee1394)-")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+=?")
# A generated name: a compact ISO time and a hex id (`20261207T233738Z-d80b4f4ead05.md`, an observation's file).
STAMPED = re.compile(r"\d{8}T\d{4,6}(?:\.\d+)?Z?(?:[-_.][0-9a-f]{4,})*(?:\.[A-Za-z]{1,5})?")
VERSION = re.compile(r"v?\d+(?:\.\d+)+(?:[-+~][0-9A-Za-z.+~-]*)?")
_NAME_VALUE = re.compile(r"(?P<name>[^\W\d][\w.@-]*)(?:[=:：]|:=)(?P<value>.+)")
_SYMBOL = re.compile(r"[^\w./-]")
_USER_PAIR = re.compile(r"(?P<user>[\w.@+-]{2,64})[ \t]+/[ \t]+$")
_LOGIN_PAIR = re.compile(r"(?<![\w.@-])(?:" + "|".join(sorted(LOGIN_NAMES)) + r"):(?=[^\s:]{6})", re.IGNORECASE)
_URL_SECRET_PARAM = re.compile(r"[?&#](?:[\w.-]*(?:token|key|secret|password|passwd|pwd|sig|signature|auth"
                               r"|credential|code))=(?P<value>[^&#\s]+)", re.IGNORECASE)


@dataclass(frozen=True)
class Finding:
    start: int
    end: int
    why: str


def entropy(value: str) -> float:
    """Shannon entropy per character."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


_RUNS = re.compile(r"[a-z]+|[A-Z]+|[0-9]+|[^a-zA-Z0-9]+")


def changes(value: str) -> int:
    """How often the character class (lower, upper, digit, other) changes along the value."""
    return len(_RUNS.findall(value)) - 1


_PIECES = re.compile(r"[-._/~+=:]+")


def _random_chars(value: str) -> int:
    """Characters in pieces that are not ordinary words: a path of words (`usr/share/icons/16x16/…`)
    has few, a base64 secret with a `/` in it nearly all; a path with two words in it is a path."""
    pieces = [p for p in _PIECES.split(value) if p]
    if "/" in value and sum(len(p) >= 3 and ordinary_words(p) for p in pieces) >= 2:
        return 0
    return sum(len(p) for p in pieces if not ordinary_words(p))


def shape(value: str) -> str | None:
    """"strong" (random without context), "medium" (random given context), "hex", "weak" (a label's
    value only), or None."""
    if len(value) < 6 or is_placeholder(value):
        return None
    if HEX.fullmatch(value):
        return "hex" if len(value) >= 16 else ("weak" if looks_random(value) else None)
    lower = value.upper() != value
    upper = value.lower() != value
    digit = bool(_DIGIT.search(value))
    ordinary = ordinary_words(value)
    if (len(value) >= STRONG_MIN and lower and upper and digit and not ordinary
            and _random_chars(value) >= max(16, 0.6 * len(value))
            and changes(value) >= 0.3 * len(value) and entropy(value) >= 3.5
            and all(c.isalnum() or c in "+/=_-.~" for c in value)):
        return "strong"
    if not ordinary and len(value) >= 8 and entropy(value) >= 2.5 and (lower or upper) and _medium(
            value, lower, upper, digit, changes(value)):
        return "medium"
    return "weak" if looks_random(value, 6) else None


_DIGIT_RUNS = re.compile(r"\d+")
_SYMBOLS = re.compile(r"[^\w.\-/]")


def _medium(value: str, lower: bool, upper: bool, digit: bool, flips: int) -> bool:
    """Random given context: upper, lower and digits; a symbol among letters and digits; digits
    scattered through lower case (`k7x9m2p4q8`); or case flipping often. Not `ip6tables-translate`,
    `ExternalIgnoreList` (one hump a word), `ata-WDC_WD5001AALS` (a disk's model)."""
    if flips < 3:
        return False
    if lower and upper and digit:
        return True
    if _SYMBOLS.search(value) and (digit or (lower and upper)):
        return True
    if digit and len(_DIGIT_RUNS.findall(value)) >= 3 and len(value) >= 10:
        return True
    return lower and upper and not digit and flips >= len(value) / 3


def identifier(token: str, value: str, before: str) -> bool:
    """A shape engineers search for, that is never a secret (`before`: the text in front on its line)."""
    return bool(UUID.fullmatch(value) or DIGEST_PREFIX.match(token) or VERSION.fullmatch(value)
                or DISK_ID.match(value) or LVM_UUID.fullmatch(value) or FILE_PATH.fullmatch(value)
                or EMAIL.fullmatch(value) or ENV_NAME.fullmatch(value)
                or "@sha" in token or value.startswith(":") or ARN.match(token)
                or IPFS_CID.fullmatch(value) or (value.islower() and K8S_NAME.fullmatch(value))
                or PUBLIC_KEY_WORD.search(before[-48:].rstrip()) or (value.startswith("AAAA") and len(value) >= 60)
                or KEY_IDS.fullmatch(value) or token.startswith("data:") or STAMPED.fullmatch(value))


@cache
def _words() -> tuple[ahocorasick_rs.AhoCorasick, list[tuple[str, str]]]:
    table = [(w, "label") for w in LABELS] + [(w, "not") for w in NOT_LABELS] \
        + [(w, "user") for w in USER_LABELS] + [(w, "vendor") for w in VENDORS]
    table = list(dict(table).items())   # a word in two lists keeps its first meaning
    return ahocorasick_rs.AhoCorasick([w for w, _ in table], matchkind=ahocorasick_rs.MatchKind.LeftmostLongest), table


def _is_word_at(text: str, start: int, end: int) -> bool:
    """Word boundaries in ASCII terms: `pass` is not `passage`, `_` joins (`DB_PASSWORD`), and a CJK
    label needs none (`密码是…`)."""
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return not (before.isascii() and before.isalnum()) and not (after.isascii() and after.isalnum())


@dataclass
class _Context:
    """The words of one piece of text (a line, a header cell, a heading): (start, end, meaning)."""

    words: list[tuple[int, int, str]]

    def has(self, meaning: str) -> bool:
        return any(m == meaning for _, _, m in self.words)

    def label_before(self, text: str, pos: int) -> str | None:
        """"separated" when a label ends right in front of `pos` with a separator between (`password:`),
        "spaced" when only decoration or space is between (`api key 0a1b…`), else None."""
        for _, end, meaning in reversed(self.words):
            if end <= pos and meaning == "label":
                gap = _GAP.fullmatch(text, end, pos)
                if gap is None:
                    return None
                return "separated" if _SEPARATOR.search(gap.group(0)) else "spaced"
        return None


def _context(text: str, start: int, end: int) -> _Context:
    ac, table = _words()
    piece = text[start:end].lower()
    if len(piece) != end - start:   # 'İ': lower-casing changed the length; no context rather than wrong offsets
        return _Context([])
    out = []
    if not piece.isascii():   # a lone surrogate (output decoded with surrogateescape): one character for one
        piece = _SURROGATE.sub("\ufffd", piece)
    for i, s, e in ac.find_matches_as_indexes(piece):
        if (_is_word_at(piece, s, e) or table[i][0] in ("api_key", "secret_key", "client_secret")) \
                and not _in_path(piece, s, e):
            out.append((start + s, start + e, table[i][1]))
    return _Context(out)


_SURROGATE = re.compile("[\ud800-\udfff]")
_SPACE = re.compile(r"[\s|]")


def _in_path(piece: str, s: int, e: int) -> bool:
    """A word inside a path or URL (`…/dialog-password-symbolic.png`) names a file, not a credential."""
    m = _SPACE.search(piece, e, e + 200)
    lo = max(0, s - 200)
    token = piece[max(lo - 1, piece.rfind(" ", lo, s), piece.rfind("|", lo, s), piece.rfind("\t", lo, s)) + 1:
                  m.start() if m else min(len(piece), e + 200)]
    return "/" in token or "\\" in token


def find(text: str) -> list[Finding]:
    """Every undeclared secret in `text`, in order, not overlapping."""
    skip = [m.span() for m in PUBLIC_BLOCK.finditer(text)] if "-----BEGIN" in text else []
    if "[REDACTED:" in text:
        # A marker is no context (`[REDACTED:undeclared-secret]` says "secret") but still a word (the
        # value after `-p`): filled with NULs, same length, and nothing found on it is kept.
        skip += [m.span() for m in _MARKER.finditer(text)]
        text = _MARKER.sub(lambda m: "\0" * len(m.group(0)), text)
    if not text.isascii():
        text = text.translate(BOX_DRAWING)   # a box-drawn table reads as an ASCII one (same offsets)
    found = [Finding(f.start, f.end, "credential-option") for f in credential_options.find(text)]
    found += [Finding(s, e, "credential-line") for s, e in credential_lines.find(text)]
    found += list(_shaped(text))
    return _resolve(found, sorted(skip))


@lru_cache(maxsize=1024)
def _found_values(whole: str) -> tuple[str, ...]:
    return tuple(sorted({whole[f.start:f.end] for f in find(whole)}, key=len, reverse=True))


def hide_found(piece: str, whole: str) -> str:
    """`piece` (a snippet or title cut from `whole`) with every value the detector finds in `whole`
    hidden: a piece never decides differently from its file."""
    for value in _found_values(whole):
        if value in piece:
            piece = piece.replace(value, f"[REDACTED:{RULE}]")
    return piece


def _lines(text: str) -> list[int]:
    return [0, *(m.end() for m in re.finditer("\n", text))]


def _line_words(text: str, starts: list[int]) -> dict[int, list[tuple[int, int, str]]]:
    """Line number -> its context words, from one Aho-Corasick pass over the whole text."""
    whole = _context(text, 0, len(text))
    if not whole.words and len(text.lower()) != len(text):   # offsets would not line up: line by line
        out: dict[int, list[tuple[int, int, str]]] = {}
        for i, s in enumerate(starts):
            e = starts[i + 1] - 1 if i + 1 < len(starts) else len(text)
            if words := _context(text, s, e).words:
                out[i] = words
        return out
    out = {}
    for w in whole.words:
        out.setdefault(bisect_right(starts, w[0]) - 1, []).append(w)
    return out


def _strong_eligible(value: str) -> bool:
    return len(value) >= STRONG_MIN and not value.islower() and not value.isupper() and bool(_DIGIT.search(value))


_DIGIT = re.compile(r"\d")


def _shaped(text: str) -> Iterator[Finding]:
    starts = _lines(text)
    n = len(starts)
    words = _line_words(text, starts)
    key_lines = {bisect_right(starts, m.start()) - 1 for m in KEY_IDS.finditer(text)}

    def line_of(i: int) -> tuple[int, int]:
        return starts[i], (starts[i + 1] - 1 if i + 1 < n else len(text))

    # Rows of a table drawn without outer bars -> their delimiter: psql's ` a | b`, CSV, TSV, `a;b`.
    open_rows: dict[int, str] = {}

    fixed: dict[int, list[int]] = {}   # rows of a fixed-width table -> where its columns start

    def cells(i: int) -> list[tuple[int, int]]:
        s, e = line_of(i)
        line = text[s:e]
        if i in fixed:
            edges = [s + c - 1 for c in fixed[i] if c < len(line)]
            return list(pairwise([*edges, e])) if edges else []
        if not line.lstrip().startswith("|"):
            if i not in open_rows:
                return []
            return list(pairwise([s - 1, *(s + j for j, c in enumerate(line) if c == open_rows[i]), e]))
        bars = [s + j for j, c in enumerate(line) if c == "|"]
        return list(pairwise(bars))

    def is_row(j: int) -> bool:
        line = text[line_of(j)[0]:line_of(j)[1]]
        return line.lstrip().startswith("|") or (j in open_rows and open_rows[j] in line)

    def context(i: int) -> tuple[_Context, list[tuple[int, int]]]:
        return _Context(words.get(i, [])), cells(i)

    # Lines where context can decide: context words, a key id next to them, a ` / ` pair, a table row
    # whose header speaks, a line under a heading that does. Elsewhere only a strong token can.
    hot = set(words) | {j for i in key_lines for j in (i - 1, i, i + 1)}
    hot.update(bisect_right(starts, m.start()) - 1 for m in _LOGIN_PAIR.finditer(text))   # `root:<value>`
    at = text.find(" / ")
    while at >= 0:
        hot.add(bisect_right(starts, at) - 1)
        at = text.find(" / ", at + 3)
    headers: dict[int, list[_Context]] = {}
    if "|" in text:
        rules = {bisect_right(starts, m.start()) - 1: m for m in _TABLE_RULE_ANY.finditer(text)}
        for i, m in rules.items():
            if "+" in m.group(0) and not m.group(0).lstrip().startswith(("+", "|")):
                # psql's `----+----`: the header above and the rows below have no outer bars
                open_rows[i - 1] = "|"
                j = i + 1
                while j < n and "|" in text[line_of(j)[0]:line_of(j)[1]]:
                    open_rows[j] = "|"
                    j += 1
            head, j = i - 1, i + 1
            if i == 0 or not cells(i - 1):
                # A box's top border: the header is the row below it; when no rule follows that row, the rows
                # under it are the body (a box drawn without a rule under its header).
                if i + 2 >= n or not is_row(i + 1) or i + 2 in rules:
                    continue
                head, j = i + 1, i + 2
            row = words.get(head, [])
            cols = [_Context([w for w in row if a < w[0] < b]) for a, b in cells(head)]
            # A box draws a rule between rows too (`+---+`): they stay under the first header.
            while j < n and (j in rules or is_row(j)):
                if j not in rules:
                    headers.setdefault(j, cols)
                    if row:
                        hot.add(j)
                j += 1
    if "--" in text:
        _fixed_width(text, starts, words, line_of, cells, fixed, headers, hot)
    _delimited(text, n, words, line_of, cells, open_rows, headers, hot)
    for i in list(words):
        hot.update((i + 1, i + 2, i + 3))

    for m in _tokens(text, starts, hot, line_of):
        raw = m.group(0)
        token = raw
        if raw[0] in "*_“‘«" or raw[-1] in "*_:.,;!?)”’»":
            # Sentence and emphasis ends are not part of a word; a `?`, `!` or `*` after digits may be a password's.
            token = raw.strip("“”‘’«»").rstrip(".,:;)")
            if token.startswith(("*", "_")) or token.endswith(("**", "__")):   # emphasis: `**Xk29fLq0**`
                token = token.strip("*_")
            if not _DIGIT.search(token):
                token = token.rstrip("!?*")
        if len(token) < 6 or (token.isalpha() and token.islower()):
            continue
        start = m.start() + raw.find(token)
        i = bisect_right(starts, start) - 1
        cold = i not in hot
        for value, vstart, named in _values(token, start):
            if cold and not _strong_eligible(value):
                continue
            kind = shape(value)
            if kind is None or (cold and kind != "strong"):
                continue
            ls, le = line_of(i)
            if identifier(token, value, text[ls:start]):
                continue
            why = _decide(text, kind, value, vstart, i, ls, le, named, context, headers, key_lines, line_of)
            if why:
                yield Finding(vstart, vstart + len(value), why)


_DASH_RULE = re.compile(r"^[ \t]*-{2,}(?:[ \t]+-{2,})+[ \t]*$", re.MULTILINE)
_DASH_RUN = re.compile(r"-{2,}")


def _fixed_width(text: str, starts: list[int], words: dict[int, list[tuple[int, int, str]]],
                 line_of: Callable[[int], tuple[int, int]], cells: Callable[[int], list[tuple[int, int]]],
                 fixed: dict[int, list[int]], headers: dict[int, list[_Context]], hot: set[int]) -> None:
    """A table aligned by spaces with a dashed rule under its header (tabulate's and `column -t`'s simple
    format): the dash runs are the columns, the header above names them, the lines below to a blank one are rows."""
    n = len(starts)
    for m in _DASH_RULE.finditer(text):
        i = bisect_right(starts, m.start()) - 1
        if i == 0 or not any(mm == "label" for _, _, mm in words.get(i - 1, [])):
            continue
        columns = [r.start() for r in _DASH_RUN.finditer(text, *line_of(i))]
        columns = [c - line_of(i)[0] for c in columns]
        j = i + 1
        while j < n and text[slice(*line_of(j))].strip():
            j += 1
        for r in (i - 1, *range(i + 1, j)):
            fixed[r] = columns
        head = words.get(i - 1, [])
        cols = [_Context([w for w in head if a <= w[0] < b]) for a, b in cells(i - 1)]
        for r in range(i + 1, j):
            headers.setdefault(r, cols)
            hot.add(r)


_DELIMITERS = ("\t", ",", ";", "|")
_HEADER_FIELD = re.compile(r"[ \t]*[\"']?[^\s\"'.!?]+(?:[ _-][^\s\"'.!?]+){0,2}[\"']?[ \t]*")


def _delimited(text: str, n: int, words: dict[int, list[tuple[int, int, str]]],
               line_of: Callable[[int], tuple[int, int]], cells: Callable[[int], list[tuple[int, int]]],
               open_rows: dict[int, str], headers: dict[int, list[_Context]], hot: set[int]) -> None:
    """A table with no rule line: a header of short fields, one of them a label (`user,password`,
    `host\tlogin\tpasswd`, psql's unaligned `usename|passwd`), and the lines below it with as many delimiters."""
    for i in sorted(words):
        if i in headers or i in open_rows or not any(m == "label" for _, _, m in words[i]):
            continue
        line = text[slice(*line_of(i))]
        for d in _DELIMITERS:
            k = line.count(d)
            if not k or line.lstrip().startswith("|") or not all(
                    len(f) <= 32 and _HEADER_FIELD.fullmatch(f) for f in line.split(d)):
                continue
            j = i + 1
            while j < n and text[slice(*line_of(j))].count(d) == k:
                j += 1
            if j == i + 1:
                continue
            for r in range(i, j):
                open_rows[r] = d
            cols = [_Context([w for w in words[i] if a < w[0] < b]) for a, b in cells(i)]
            for r in range(i + 1, j):
                headers.setdefault(r, cols)
                hot.add(r)
            break


_LONG_TOKEN = re.compile(_TOKEN.pattern.removesuffix("{6,}") + "{" + str(STRONG_MIN) + ",}")


def _tokens(text: str, starts: list[int], hot: set[int], line_of) -> Iterator[re.Match[str]]:
    """Every token of a hot line; elsewhere only those long enough to be strong (one C-speed scan)."""
    hot_lines = sorted(i for i in hot if 0 <= i < len(starts))
    if len(hot_lines) * 4 > len(starts):
        yield from _TOKEN.finditer(text)
        return
    k = 0
    for m in _LONG_TOKEN.finditer(text):
        i = bisect_right(starts, m.start()) - 1
        while k < len(hot_lines) and hot_lines[k] < i:
            yield from _TOKEN.finditer(text, *line_of(hot_lines[k]))
            k += 1
        if k < len(hot_lines) and hot_lines[k] == i:
            continue   # the hot line's own scan below takes it
        yield m
    for j in hot_lines[k:]:
        yield from _TOKEN.finditer(text, *line_of(j))


# A table's rule: markdown's `|---|:--:|`, a box's `+----+====+` (box-drawing characters read as these), psql's
# `-----+-----`.
_TABLE_RULE_ANY = re.compile(r"^[ \t]*[|+]?[ \t]*:?[-=]{3,}:?[ \t]*(?:[|+][ \t]*:?[-=]{3,}:?[ \t]*)*[|+]?[ \t]*$",
                             re.MULTILINE)


def _values(token: str, start: int) -> Iterator[tuple[str, int, str]]:
    """(value, its start, the name in front of it inside the token) for a token and, for `name=value`,
    `name:value` and URLs, the part a secret would be."""
    if "://" in token:
        for m in _URL_SECRET_PARAM.finditer(token):
            yield m.group("value"), start + m.start("value"), "url-param"
        return
    m = _NAME_VALUE.fullmatch(token)
    if m and len(m.group("value")) >= 3 and not DIGEST_PREFIX.match(token):
        yield m.group("value").rstrip(_TRAIL), start + m.start("value"), m.group("name")
        return
    cut = max(token.rfind(":"), token.rfind("="))
    if 0 < cut < len(token) - 6 and not DIGEST_PREFIX.match(token):   # `7263518273:AAHf…` (a bot id, then its token)
        yield token[cut + 1:], start + cut + 1, token[:cut]
        return
    yield token, start, ""


def _decide(text, kind, value, vstart, i, ls, le, named, context, headers, key_lines, line_of) -> str | None:
    ctx, row = context(i)
    if any(s < vstart + len(value) and vstart < e for s, e, _ in ctx.words):
        return None   # the value holds a label or vendor word itself: `WLAN-Schlüssel:`, `DB_PASSWORD`
    labelled_by_name = bool(named) and (named == "url-param" or _context(named, 0, len(named)).has("label"))
    before = "separated" if labelled_by_name else ctx.label_before(text, vstart)
    # The column header of the cell it stands in.
    col = None
    if row and i in headers:
        idx = next((k for k, (a, b) in enumerate(row) if a < vstart < b), None)
        if idx is not None and idx < len(headers[i]):
            col = headers[i][idx]
    cell = next(((a, b) for a, b in row if a < vstart < b), None)
    own = text[cell[0] + 1:cell[1]] if cell else text[ls:le]
    alone = value in own and len(own.strip(" \t|`*>-_:.")) <= len(value) + 2
    above = _above(text, i, line_of, context) if alone and not before else None
    # A value alone in a labelled column or under a labelled heading is as good as `label: value`.
    if (col is not None and col.has("label")) or (above is not None and above.has("label")):
        before = "separated"
    if before and kind != "strong" and (names_a_file(value) or _FILE_MODE.fullmatch(value)
                                        or value.startswith(("$", "%"))):
        return None
    if before == "separated" or (before == "spaced" and (kind != "weak" or (
            _SYMBOL.search(value) and _DIGIT.search(value)))):   # `passphrase Garten7458+`, not `token times-out`
        return "labelled"
    if kind == "weak":
        # After `user / `, a chosen password (`Kaffee8559+`): one with a symbol in it, not `x86_64 / arm64`.
        if _USER_PAIR.search(text, ls, vstart) and _SYMBOL.search(value) and not names_a_file(value):
            return "user-password"
        return None
    if kind == "hex":
        line_label = ctx.has("label")
        vendor = ctx.has("vendor") or (col is not None and col.has("vendor"))
        return "labelled" if line_label else "vendor-pair" if vendor else None
    versionish = bool(_VERSION.search(value)) and kind != "strong"
    if kind == "strong":
        return None if encodes_prose(value) else "bare-token"
    if versionish or names_a_file(value) or (value.startswith(("/", "~/", "./")) and value.count("/") >= 2):
        return None
    if i in key_lines or (i - 1) in key_lines or (i + 1) in key_lines:
        return "vendor-pair"
    if ctx.has("vendor") or (col is not None and col.has("vendor")):
        return "vendor-pair"
    if ctx.has("label"):
        return "labelled"
    if _USER_PAIR.search(text, ls, vstart) or (named and named != "url-param" and (
            ctx.has("user") or (col is not None and col.has("user")) or named.lower() in LOGIN_NAMES)):
        return "user-password"
    if above is not None and (above.has("vendor")):
        return "vendor-pair"
    return None


def _above(text: str, i: int, line_of, context) -> _Context | None:
    """The heading or `Label:` line right above line `i` (blank lines between), if there is one."""
    j = i - 1
    while j >= 0 and not text[slice(*line_of(j))].strip():
        j -= 1
    if j < 0 or i - j > 3:
        return None
    s, e = line_of(j)
    if not _HEADING.match(text[s:e]):
        return None
    return context(j)[0]


def _resolve(found: list[Finding], skip: list[tuple[int, int]]) -> list[Finding]:
    found.sort(key=lambda f: (f.start, -f.end))
    out: list[Finding] = []
    for f in found:
        if f.end <= f.start:
            continue
        k = bisect_right(skip, (f.start, 1 << 62)) - 1
        if (k >= 0 and skip[k][1] > f.start) or any(s < f.end and f.start < e for s, e in skip[k + 1:k + 2]):
            continue
        if out and f.start < out[-1].end:
            if f.end > out[-1].end:
                out[-1] = Finding(out[-1].start, f.end, out[-1].why)
            continue
        out.append(f)
    return out
