"""Recovery, backup and scratch codes: a list under a line that names them (`GitHub recovery codes:`,
`Backup codes`, `2FA scratch codes`, `Wiederherstellungscodes`). Each code alone looks like nothing (`7f3k-9qpz`,
`84620193`); the heading makes the list a set of one-time passwords. Every code-shaped line right below
it (bulleted, numbered, in a table or a code block) is one; the list ends at the first other line."""

from __future__ import annotations

import re
from collections.abc import Iterator

from muninn.guards.rules import Rule
from muninn.guards.undeclared.lexicon import RECOVERY

# The heading's words in every language of the lexicon (`Notfallcodes`, `kody zapasowe`, `резервные коды`).
_HEADING = RECOVERY
_CODE_LINE = re.compile(r"[ \t]*(?:[-*+]|\d{1,2}[.)]|\|)?[ \t]*`?"
                        r"(?P<secret>(?=[a-z0-9-]*\d)[a-z0-9]{4,6}(?:[- ][a-z0-9]{4,6}){0,3}|\d{6,12})"
                        r"`?[ \t]*\|?[ \t]*\r?$", re.IGNORECASE)
_MAX_CODES = 24
# Every heading of the lexicon holds one of these (`codes`, `códigos`, `kody`, `koder`, `коды`, `コード`, `码`).
_STEMS = ("cod", "cód", "kod", "kód", "kood", "код", "κωδικ", "コード", "码", "碼", "코드", "رموز", "mã ")


class RecoveryCodes(Rule):
    name = "recovery-code"
    patterns = ()
    # The lexicon's words share no one literal (`kody`, `коды`, `コード`): the heading search is the filter.
    triggers = ()

    def spans(self, text: str, lowered: str | None = None, *, checked: bool = False) -> Iterator[tuple[int, int]]:
        lowered = text.lower() if lowered is None else lowered
        if not any(w in lowered for w in _STEMS):
            return
        for heading in _HEADING.finditer(lowered):
            pos = text.find("\n", heading.end())
            taken = skipped = 0
            while pos != -1 and taken < _MAX_CODES:
                end = text.find("\n", pos + 1)
                line_end = len(text) if end == -1 else end
                line = text[pos + 1:line_end]
                if line.strip() in ("", "```", "~~~") or set(line.strip()) <= set("|-: "):
                    if line.strip() == "" and taken:
                        break
                    pos = end
                    continue
                for cell in (line.split("|") if "|" in line else [line]):
                    m = _CODE_LINE.fullmatch(cell)
                    if m is None:
                        continue
                    start = pos + 1 + line.index(cell) + m.start("secret")
                    yield start, start + len(m.group("secret"))
                    taken += 1
                if not any(_CODE_LINE.fullmatch(c) for c in (line.split("|") if "|" in line else [line])):
                    # A table's header row may stand between the heading and its first code.
                    if taken or "|" not in line or skipped >= 2:
                        break
                    skipped += 1
                pos = end
