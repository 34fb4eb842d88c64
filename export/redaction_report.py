"""Where redaction acted, for the owner: each replacement's file, line and rule or secret id, and a
pattern hit's fingerprint (guards/redact/allowlist.py) to copy into `muninn redact allow`. Never the value,
never the matched text.

Fields are redacted one by one before rendering (so a marker never breaks the front matter's
quoting), which means a hit's line is only known once the fact is rendered. So each fact is also
rendered once with numbered markers (`[REDACTED:auth-header#<tag>.3]`, no line breaks, like the real
ones): the line of marker #3 in that text is the line of the third hit in the real file. A marker
left by a source that redacts before it builds its facts (observations) has no number; it gets the
fingerprint of that source's hit with the same rule, in order, while the fact was made.
"""

from __future__ import annotations

import re
import secrets
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from muninn.guards.redact.allowlist import Allowlist
from muninn.guards.redact.redactor import Hit, Redacted, marker

# A numbered marker carries the run's tag: a note may quote marker text (`[REDACTED:aws-key#7]`) and that
# must neither be read as hit #7 nor counted as a redaction.
_NUMBERED = re.compile(r"\[REDACTED:([^\]\n#]*)(?:#([0-9a-f]{8})\.(\d+))?\]")


@dataclass(frozen=True)
class Mark:
    kind: str               # "value" or "pattern"
    name: str               # the secret id or the rule
    fingerprint: str | None


@dataclass
class FactMarks:
    """One fact's hits in the order they were made, and the text each field became."""

    allowlist: Allowlist
    marks: list[Mark] = field(default_factory=list)
    # Per numbered mark: the unredacted field text and the hit's span in it, so the review can find the
    # source line (export/source_lines.py). Held in memory for this fact only, never written.
    origins: list[tuple[str, int, int]] = field(default_factory=list)
    source: list[Mark] = field(default_factory=list)    # hits a source made before the fact existed
    _seen: dict[str, tuple[str, str]] = field(default_factory=dict)
    _tag: str = field(default_factory=lambda: secrets.token_hex(4))

    def mark(self, text: str, hit: Hit) -> Mark:
        fp = self.allowlist.fingerprint(hit.rule, text[hit.start:hit.end]) if hit.kind == "pattern" else None
        return Mark(hit.kind, hit.secret_id, fp)

    def field_text(self, text: str, redact: Callable[[str], Redacted]) -> tuple[str, str]:
        """(redacted text, the same with numbered markers). A text seen before maps to the same
        numbers: the same value in two fields is one hit shown on two lines."""
        if text in self._seen:
            return self._seen[text]
        result = redact(text)
        pieces: list[str] = []
        pos = 0
        for hit in result.hits:
            pieces.append(text[pos:hit.start])
            pieces.append(f"[REDACTED:{hit.secret_id}#{self._tag}.{len(self.marks)}]")
            self.marks.append(self.mark(text, hit))
            self.origins.append((text, hit.start, hit.end))
            pos = hit.end
        pieces.append(text[pos:])
        self._seen[text] = (result.text, "".join(pieces))
        return self._seen[text]

    def locate(self, file: str, numbered_text: str, seen: dict[str, set[Mark]] | None = None,
               origins: list[tuple[str, int, int] | None] | None = None) -> list[dict[str, Any]]:
        """One entry per marker in the rendered file (numbered_text: the fact rendered with numbers).
        An unnumbered marker takes the next source hit of its name made with this fact, else the one
        mark its name had in the whole run (`seen`: a neighbour's line redacted for an earlier fact),
        else no fingerprint: several texts could be behind it. `origins`, when given, gets one item per
        entry: the field text and span the hit was made in (None for an unnumbered marker)."""
        out: list[dict[str, Any]] = []
        pending = list(self.source)
        seen = seen or {}
        line = 1
        pos = 0
        for m in _NUMBERED.finditer(numbered_text):
            line += numbered_text.count("\n", pos, m.start())
            pos = m.start()
            name = m.group(1)
            if m.group(2) is not None:
                if m.group(2) != self._tag:
                    continue            # marker text quoted in a source, not a hit of this run
                mk = self.marks[int(m.group(3))]
                if origins is not None:
                    origins.append(self.origins[int(m.group(3))])
                out.append(entry(file, line, mk))
                continue
            if (mk := next((s for s in pending if s.name == name), None)) is not None:
                pending.remove(mk)
            else:
                known = seen.get(name, set())
                mk = next(iter(known)) if len(known) == 1 else Mark(_kind_of(name, known), name, None)
            if origins is not None:
                origins.append(None)
            out.append(entry(file, line, mk))
        return out


def _kind_of(name: str, marks: set[Mark]) -> str:
    if marks:
        return next(iter(marks)).kind
    from muninn.guards.redact.patterns import rule_names

    return "pattern" if name in rule_names() else "value"


def entry(file: str, line: int, mk: Mark) -> dict[str, Any]:
    if mk.kind == "value":
        return {"file": file, "line": line, "kind": "value", "secret_id": mk.name, "rule": None, "fingerprint": None}
    return {"file": file, "line": line, "kind": "pattern", "secret_id": None, "rule": mk.name,
            "fingerprint": mk.fingerprint}


def path_entry(file: str) -> dict[str, Any]:
    """A value spelled in the fact's path or id (replaced by `redacted`): line 0, like the gate's path findings."""
    return {"file": file, "line": 0, "kind": "value-in-path", "secret_id": None, "rule": None, "fingerprint": None}


def summary_lines(redactions: list[dict[str, Any]], limit: int = 20) -> list[str]:
    """The human summary: counts, then each pattern hit with the fingerprint to allow it by."""
    values = sum(r["kind"] != "pattern" for r in redactions)
    patterns = [r for r in redactions if r["kind"] == "pattern"]
    if not redactions:
        return []
    lines = [f"redacted {values} known value(s) and {len(patterns)} pattern hit(s)"
             + (": a pattern hit that is not a secret is allowed with `muninn redact allow FINGERPRINT`"
                if patterns else "")]
    for r in patterns[:limit]:
        lines.append(f"  {r['file']}:{r['line']}  {r['rule']}  {r['fingerprint'] or '(no fingerprint)'}")
    if len(patterns) > limit:
        lines.append(f"  … and {len(patterns) - limit} more (--json lists every one under `redactions`)")
    return lines


# Where the full list is: an export run again lists every redaction, unchanged files included.
FULL_LIST = "muninn export all --json"


def counts(redactions: list[dict[str, Any]]) -> dict[str, Any]:
    """What a report that outlives the run keeps (nightly): how many, by rule and by secret id. No file,
    line or fingerprint: the list grows with the corpus and is one command away (FULL_LIST)."""
    return {"count": len(redactions),
            "by_rule": dict(sorted(Counter(r["rule"] for r in redactions if r["kind"] == "pattern").items())),
            "by_secret": dict(sorted(Counter(r["secret_id"] for r in redactions if r["kind"] == "value").items())),
            "in_paths": sum(r["kind"] == "value-in-path" for r in redactions)}


def rollup(by_source: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """`counts` of several sources added up, with each source's total and where the full list is."""
    rules: Counter[str] = Counter()
    secrets: Counter[str] = Counter()
    for c in by_source.values():
        rules.update(c["by_rule"])
        secrets.update(c["by_secret"])
    return {"count": sum(c["count"] for c in by_source.values()),
            "by_source": {name: c["count"] for name, c in sorted(by_source.items())},
            "by_rule": dict(sorted(rules.items())), "by_secret": dict(sorted(secrets.items())),
            "in_paths": sum(c["in_paths"] for c in by_source.values()), "full_list": FULL_LIST}


__all__ = ["FULL_LIST", "FactMarks", "Mark", "counts", "entry", "marker", "path_entry", "rollup", "summary_lines"]
