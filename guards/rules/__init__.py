"""muninn's own redaction rules: what detect-secrets misses or finds too late.

One module per rule, each a `Rule` subclass, the way a detect-secrets plugin declares
`secret_type` and `denylist`. The built-in rules go through the same door an outside rule would:
the `register_rules` hook (muninn.guards.plugin lists them).

A rule's `name` is a contract: it is written into redacted files as `[REDACTED:<name>]` and into
leak reports, so renaming one needs a migration.
"""

from __future__ import annotations

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
