"""An unlabelled password in a table row beside the account it opens: `| nas01 | admin | Pelican-Torch-6610 |`.
With no header naming the column, the row's shape says it: one cell is a login name (`admin`, `root`, a
`user@host` or an e-mail) and another is made up (8+ characters mixing upper case, lower case and digits,
no dot or slash, so not a host, version, path or date). A box-drawn row (`│ … │`, `║ … ║`) is a row."""

from __future__ import annotations

import re
from collections.abc import Iterator

from muninn.guards.rules import BOX_DRAWING, Rule, is_placeholder

_LOGINS = frozenset("admin administrator root user ubuntu pi postgres sa operator guest service deploy backup "
                    "ec2-user centos debian oracle mysql git jenkins ansible vagrant".split())
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_MADE_UP = re.compile(r"(?=[^\s]*[A-Z])(?=[^\s]*[a-z])(?=[^\s]*\d)[^\s|./\\`]{8,64}")
_ROW = re.compile(r"^[ \t]*\|(?P<cells>.*)\|[ \t]*\r?$", re.M)


class TableCredential(Rule):
    name = "table-credential"
    patterns = ()
    triggers = ("|", "│", "┃", "║")

    def spans(self, text: str, lowered: str | None = None, *, checked: bool = False) -> Iterator[tuple[int, int]]:
        if not text.isascii():
            text = text.translate(BOX_DRAWING)   # `│ nas01 │ admin │ … │` is a row too (same offsets)
        if "|" not in text:
            return
        for row in _ROW.finditer(text):
            cells = row.group("cells").split("|")
            plain = [c.strip().strip("`*") for c in cells]
            if not any(c.lower() in _LOGINS or _EMAIL.fullmatch(c) for c in plain):
                continue
            offset = row.start("cells")
            for cell, value in zip(cells, plain, strict=True):
                if _MADE_UP.fullmatch(value) and not is_placeholder(value) and not value.startswith("[REDACTED"):
                    start = offset + cell.index(value)
                    yield start, start + len(value)
                offset += len(cell) + 1
