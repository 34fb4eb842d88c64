"""An unlabelled password in a table row beside the account it opens: `| nas01 | admin | Pelican-Torch-6610 |`.
With no header naming the column, the row's shape says it: one cell is a login name (`admin`, `root`, a
`user@host` or an e-mail) and another is made up (8+ characters mixing upper case, lower case and digits,
no dot or slash, so not a host, version, path or date). A box-drawn row (`│ … │`, `║ … ║`) is a row, and so
is a tab-separated line (TSV with or without a header) and an HTML `<tr>`.

An HTML table is read like a markdown one: a cell under a header that names a credential in any language
of the lexicon (`<th>Passwort</th>`, `<th>heslo</th>`) is a secret when it looks random, and so is the cell
right after one that names it (`<td>password</td><td>v</td>`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from muninn.guards.rules import BOX_DRAWING, Rule, is_placeholder, looks_random
from muninn.guards.undeclared.lexicon import PASSWORD, PIN

_LOGINS = frozenset("admin administrator root user ubuntu pi postgres sa operator guest service deploy backup "
                    "ec2-user centos debian oracle mysql git jenkins ansible vagrant".split())
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_MADE_UP = re.compile(r"(?=[^\s]*[A-Z])(?=[^\s]*[a-z])(?=[^\s]*\d)[^\s|./\\`]{8,64}")
_ROW = re.compile(r"^[ \t]*\|(?P<cells>.*)\|[ \t]*\r?$", re.M)
_TR = re.compile(r"<tr\b[^>]*>(?P<row>.*?)(?:</tr\s*>|(?=<tr\b)|</table)", re.I | re.S)
_TD = re.compile(r"<t(?P<kind>[hd])\b[^>]*>(?P<cell>.*?)(?=</t[hd]\s*>|<t[hd]\b|</tr|$)", re.I | re.S)
_LABEL_CELL = re.compile(rf"(?:{PASSWORD}|{PIN}|secret|token|api[ _-]?key|credentials?|psk|pre-shared key)",
                         re.I)
_PIN_VALUE = re.compile(r"\d{4,12}")


class TableCredential(Rule):
    name = "table-credential"
    patterns = ()
    triggers = ("|", "│", "┃", "║", "\t", "<tr", "<td")

    def spans(self, text: str, lowered: str | None = None, *, checked: bool = False) -> Iterator[tuple[int, int]]:
        if not text.isascii():
            text = text.translate(BOX_DRAWING)   # `│ nas01 │ admin │ … │` is a row too (same offsets)
        if "\t" in text:
            yield from self._rows(text, _tsv_rows(text), "\t")
        if "<t" in text or "<T" in text:
            yield from _html(text)
        if "|" not in text:
            return
        yield from self._rows(text, ((m.start("cells"), m.group("cells")) for m in _ROW.finditer(text)), "|")

    def _rows(self, text: str, rows: Iterable[tuple[int, str]], bar: str) -> Iterator[tuple[int, int]]:
        for offset, row in rows:
            cells = row.split(bar)
            plain = [c.strip().strip("`*") for c in cells]
            if not any(c.lower() in _LOGINS or _EMAIL.fullmatch(c) for c in plain):
                continue
            for cell, value in zip(cells, plain, strict=True):
                if _MADE_UP.fullmatch(value) and not is_placeholder(value) and not value.startswith("[REDACTED"):
                    start = offset + cell.index(value)
                    yield start, start + len(value)
                offset += len(cell) + 1


def _tsv_rows(text: str) -> Iterator[tuple[int, str]]:
    """(start, cells) of every line with a tab between two cells, its indentation and trailing space cut."""
    at = text.find("\t")
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        line = text[start:end].rstrip(" \t\r")
        body = line.lstrip(" \t")
        if "\t" in body:
            yield start + len(line) - len(body), body
        at = text.find("\t", end)


def _plain(cell: str) -> str:
    return re.sub(r"<[^>]*>", "", cell).strip().strip("`*")


def _html(text: str) -> Iterator[tuple[int, int]]:
    """HTML rows: the columns a header row names, a cell after a label cell, a made-up cell beside a login."""
    labelled: set[int] = set()
    for tr in _TR.finditer(text):
        cells = [(m.group("kind").lower(), m.start("cell"), m.group("cell")) for m in _TD.finditer(tr.group("row"))]
        base = tr.start("row")
        plain = [_plain(c) for _, _, c in cells]
        if cells and all(k == "h" for k, _, _ in cells):
            labelled = {i for i, p in enumerate(plain) if _LABEL_CELL.fullmatch(p)}
            continue
        login = any(p.lower() in _LOGINS or _EMAIL.fullmatch(p) for p in plain)
        for i, ((_, at, raw), value) in enumerate(zip(cells, plain, strict=True)):
            if not value or is_placeholder(value) or value.startswith("[REDACTED") or " " in value:
                continue
            after_label = i > 0 and bool(_LABEL_CELL.fullmatch(plain[i - 1]))
            if ((i in labelled or after_label) and (looks_random(value, 6) or _PIN_VALUE.fullmatch(value))) \
                    or (login and _MADE_UP.fullmatch(value)):
                start = base + at + raw.index(value)
                yield start, start + len(value)
