"""muninn's own redaction rules: what detect-secrets misses or finds too late.

One module per rule, each a `Rule` subclass registered with `@register`, the way a
detect-secrets plugin declares `secret_type` and `denylist`. The built-in rules go through the
same door an outside rule would: import the module and it is registered.

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
    """A pattern whose group `secret` (or whole match) is redacted."""

    name: ClassVar[str]
    patterns: ClassVar[tuple[re.Pattern[str], ...]]
    # Lower-case literals one of which a document must contain for the rule to be worth running.
    # Empty means always run.
    triggers: ClassVar[tuple[str, ...]] = ()

    def accept(self, match: re.Match[str], value: str) -> bool:
        return not is_placeholder(value)

    def spans(self, text: str, lowered: str | None = None) -> Iterator[tuple[int, int]]:
        if self.triggers:
            lowered = text.lower() if lowered is None else lowered
            if not any(t in lowered for t in self.triggers):
                return
        for pattern in self.patterns:
            for m in pattern.finditer(text):
                group = "secret" if "secret" in pattern.groupindex else 0
                start, end = m.span(group)
                if start < end and self.accept(m, text[start:end]):
                    yield start, end


RULES: dict[str, Rule] = {}


def register(cls: type[Rule]) -> type[Rule]:
    if cls.name in RULES:
        raise ValueError(f"duplicate redaction rule name {cls.name!r}")
    RULES[cls.name] = cls()
    return cls


def _load_builtin() -> None:
    from muninn.guards.rules import (  # noqa: F401  (imported to register)
        auth_header,
        aws,
        azure,
        gcp,
        github,
        jwt,
        labelled,
        private_key,
        slack,
        stripe,
        url_credentials,
        vendor,
    )


_load_builtin()
