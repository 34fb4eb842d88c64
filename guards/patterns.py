"""The pattern pass: detect-secrets' own plugins plus muninn's rules (`guards/rules/`).

detect-secrets is line-oriented and costs ~30–110 µs per line with its 26 plugins, i.e. well
under 1 MB/s on ordinary text. Nearly every line of a note can be ruled out much more cheaply,
so one compiled trigger regex runs over the whole document first and only the lines it marks go
through the plugins. The trigger is derived from what the plugins need to fire (see `_TRIGGER`);
the eval `evals/bench_redact.py` measures both paths and the tests check that the trigger never
hides a finding detect-secrets would have made on the planted corpus.

Settings are detect-secrets' defaults (all plugins, default entropy limits, default heuristic
filters), except:
- `IPPublicDetector` is off: IP addresses are how people find hosts in their notes, and an IP is
  an address, not a credential.
- the `pragma: allowlist secret` filter is off: a comment in a note must not switch redaction off.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

from muninn.guards.rules import MARKER_PREFIX, RULES, Rule

DS_PREFIX = "ds:"
_DISABLED_PLUGINS = {"IPPublicDetector"}
_DISABLED_FILTERS = {"detect_secrets.filters.allowlist.is_line_allowlisted"}

# A line can only produce a detect-secrets finding if it has one of these (from the plugins'
# own regexes, detect-secrets 1.5): a keyword of KeywordDetector's denylist (all contain key,
# pass, pwd, secret or contrase), `auth` (npm), `://` (basic auth, Slack webhooks), a quoted run
# of ≥ 8 base64/hex characters (the entropy plugins need quotes unless searching eagerly, and
# hex needs > 3 bits, i.e. ≥ 8 distinct characters), a run of ≥ 20 token characters (every
# prefixed-token plugin's shortest match is longer), or Artifactory's short prefixes.
_KEYWORD = r"key|pass|pwd|secret|contrase"
_TRIGGER = re.compile(
    rf"(?i:{_KEYWORD}|auth|://|-----BEGIN|putty)"
    r"|['\"][A-Za-z0-9+/=_-]{8,}['\"]"
    r"|[A-Za-z0-9_+/=.-]{20,}"
    r"|AKC|AP[\dA-F]"
)
_KEYWORD_RE = re.compile(_KEYWORD, re.IGNORECASE)
_MARKER = re.compile(r"\[REDACTED:[^\]\n]*\]")


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    rule: str


@dataclass
class _Detector:
    plugins: list[Any]
    keyword: Any
    filters: list[Any]


@cache
def _detector() -> _Detector:
    """Plugin instances and filter functions taken from detect-secrets' default settings once.

    detect-secrets keeps settings in a process-wide singleton; instances taken inside
    `default_settings()` keep their configuration after the context restores the old settings.
    """
    from detect_secrets.core.scan import get_filters_with_parameter
    from detect_secrets.settings import default_settings, get_plugins

    with default_settings():
        plugins = [p for p in get_plugins() if type(p).__name__ not in _DISABLED_PLUGINS]
        seen: dict[str, Any] = {}
        for f in get_filters_with_parameter("secret") + get_filters_with_parameter("line"):
            if f.path not in _DISABLED_FILTERS:
                seen.setdefault(f.path, f)
    keyword = next(p for p in plugins if type(p).__name__ == "KeywordDetector")
    return _Detector([p for p in plugins if p is not keyword], keyword, list(seen.values()))


def ds_findings(line: str, filename: str = "note.md") -> list[tuple[str, str]]:
    """(rule, secret) pairs detect-secrets reports for one line, after its heuristic filters."""
    from detect_secrets.util.inject import call_function_with_arguments

    det = _detector()
    plugins = [*det.plugins, det.keyword] if _KEYWORD_RE.search(line) else det.plugins
    out: list[tuple[str, str]] = []
    for plugin in plugins:
        for found in plugin.analyze_line(filename=filename, line=line, line_number=0, context=None):
            secret = found.secret_value
            if not secret:
                continue
            kwargs = {"secret": secret, "line": line, "plugin": plugin, "filename": filename}
            if any(call_function_with_arguments(f, **kwargs) for f in det.filters):
                continue
            out.append((DS_PREFIX + type(plugin).__name__, secret))
    return out


def _line_starts(text: str, positions: Iterable[int]) -> list[int]:
    """Start offsets of the distinct lines holding `positions` (sorted input)."""
    starts: list[int] = []
    last_end = -1
    for pos in positions:
        if pos < last_end:
            continue
        start = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        last_end = len(text) if end < 0 else end
        starts.append(start)
    return starts


class PatternScanner:
    """Finds pattern spans; `use_ds=False` leaves detect-secrets out (muninn rules only)."""

    def __init__(self, rules: Iterable[Rule] | None = None, *, use_ds: bool = True, prefilter: bool = True,
                 filename: str = "note.md") -> None:
        self.rules = list(RULES.values() if rules is None else rules)
        self.use_ds = use_ds
        self.prefilter = prefilter
        self.filename = filename
        if use_ds:
            _detector()

    def scan(self, text: str) -> list[Span]:
        """Non-overlapping spans in text order; spans touching a `[REDACTED:…]` marker are dropped
        so a second pass leaves the first one's output alone (idempotence)."""
        markers = [m.span() for m in _MARKER.finditer(text)] if MARKER_PREFIX in text else []
        lowered = text.lower()
        found: list[Span] = []
        for rule in self.rules:
            found.extend(Span(s, e, rule.name) for s, e in rule.spans(text, lowered))
        if self.use_ds:
            found.extend(self._ds_spans(text))
        return _resolve(found, markers)

    def _ds_spans(self, text: str) -> Iterable[Span]:
        if self.prefilter:
            starts = _line_starts(text, (m.start() for m in _TRIGGER.finditer(text)))
        else:
            starts = [0, *(i + 1 for i, ch in enumerate(text) if ch == "\n")]
        for start in starts:
            end = text.find("\n", start)
            end = len(text) if end < 0 else end
            line = text[start:end]
            for rule, secret in ds_findings(line, self.filename):
                pos = line.find(secret)
                while pos >= 0:
                    yield Span(start + pos, start + pos + len(secret), rule)
                    pos = line.find(secret, pos + len(secret))


def _resolve(spans: list[Span], markers: list[tuple[int, int]]) -> list[Span]:
    """Drop spans touching a marker, then merge overlaps (the union is redacted: two detectors that
    disagree on where a secret ends must not leave its tail behind). The first rule names it."""
    spans.sort(key=lambda s: (s.start, -s.end))
    out: list[Span] = []
    mi = 0
    for span in spans:
        while mi < len(markers) and markers[mi][1] <= span.start:
            mi += 1
        if mi < len(markers) and markers[mi][0] < span.end:
            continue
        if out and span.start < out[-1].end:
            if span.end > out[-1].end:
                out[-1] = Span(out[-1].start, span.end, out[-1].rule)
            continue
        out.append(span)
    return out
