"""The pattern pass: detect-secrets' own plugins plus muninn's rules (`guards/rules/`).

detect-secrets is line-oriented and costs ~30–110 µs per line with its 26 plugins, i.e. well
under 1 MB/s on ordinary text (measured in `evals/results/redact.md`). Nearly every line of a note
can be ruled out much more cheaply: one Aho-Corasick pass over the lower-cased text finds the
literals the plugins need (`key`, `://`, `ghp_`, …) and a few small regexes find the shapes that
have no literal (quoted runs, Twilio, Discord). Each line then runs only the plugins something on
it could set off. The tables below were read off detect-secrets 1.5's own regexes; the tests
check on the planted corpus that the fast path finds exactly what running every plugin on every
line finds.

Settings are detect-secrets' defaults (all plugins, default entropy limits, default heuristic
filters), except:
- `IPPublicDetector` is off: IP addresses are how people find hosts in their notes, and an IP is
  an address, not a credential.
- the `pragma: allowlist secret` filter is off: a comment in a note must not switch redaction off.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

from muninn.guards.rules import MARKER_PREFIX, Rule, all_rules, encodes_prose

DS_PREFIX = "ds:"
_DISABLED_PLUGINS = {"IPPublicDetector"}
_DISABLED_FILTERS = {"detect_secrets.filters.allowlist.is_line_allowlisted"}

# Which lines can make which detect-secrets plugin fire (detect-secrets 1.5, read off each
# plugin's own regexes). Lower-case literals are found in one Aho-Corasick pass over the lower-cased
# text; the shapes without a literal are separate small regexes (one alternation of them is ~10x
# slower than running each: `re` can skip ahead only to a pattern's first literal or character set).
# A plugin missing from these tables runs on every line, so a new detect-secrets plugin is slow,
# never skipped.
_KEYWORDS = ("key", "pass", "pwd", "pw", "secret", "contrase", "token")
# These four are keyword assignments with a vendor word in front (`cloudant_password = …`).
_KEYWORD_PLUGINS = ("KeywordDetector", "CloudantDetector", "IbmCloudIamDetector", "IbmCosHmacDetector",
                    "SoftlayerDetector")
_LITERAL_TRIGGERS: dict[str, tuple[str, ...]] = {
    **{k: _KEYWORD_PLUGINS for k in _KEYWORDS},
    "://": ("BasicAuthDetector", "SlackDetector", "CloudantDetector", "SoftlayerDetector"),
    **{k: ("AWSKeyDetector",) for k in ("akia", "asia", "abia", "acca", "a3t", "aws")},
    "accountkey=": ("AzureStorageKeyDetector",),
    "_authtoken": ("NpmDetector",),
    "eyj": ("JwtTokenDetector",),
    **{k: ("GitHubTokenDetector",) for k in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")},
    **{k: ("GitLabTokenDetector",) for k in ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "gr1348941", "glcbt-")},
    "-us": ("MailchimpDetector",),
    "sk-": ("OpenAIDetector",),
    "pypi-": ("PypiTokenDetector",),
    "sg.": ("SendGridDetector",),
    "xox": ("SlackDetector",),
    "sq0csp-": ("SquareOAuthDetector",),
    "k_live_": ("StripeDetector",),
    "begin": ("PrivateKeyDetector",),
    "putty": ("PrivateKeyDetector",),
}
_SHAPE_TRIGGERS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    # detect-secrets' base64 charset holds a backslash (its `'\\-_'`): JSON strings with `\n` count.
    (re.compile(r"['\"][A-Za-z0-9+/=_\\-]{8,}['\"]"), ("Base64HighEntropyString", "HexHighEntropyString")),
    (re.compile(r":[0-9A-Za-z_-]{35}"), ("TelegramBotTokenDetector",)),
    (re.compile(r"AKC|AP[\dA-F]"), ("ArtifactoryDetector",)),
    (re.compile(r"(?:AC|SK)[a-z0-9]{32}"), ("TwilioKeyDetector",)),
    (re.compile(r"[MNO][a-zA-Z\d_-]{23}"), ("DiscordBotTokenDetector",)),
)
_MAPPED = {p for ps in _LITERAL_TRIGGERS.values() for p in ps} | {p for _, ps in _SHAPE_TRIGGERS for p in ps}
_MARKER = re.compile(r"\[REDACTED:[^\]\n]*\]")
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    rule: str


@dataclass
class _Detector:
    plugins: dict[str, Any]       # class name -> instance
    unmapped: list[str]           # plugins no trigger covers: run on every line
    filters: list[Any]
    literals: Any                 # Aho-Corasick over `_LITERAL_TRIGGERS`
    literal_plugins: list[tuple[str, ...]]


@cache
def _detector() -> _Detector:
    """Plugin instances and filter functions taken from detect-secrets' default settings once.

    detect-secrets keeps settings in a process-wide singleton; instances taken inside
    `default_settings()` keep their configuration after the context restores the old settings.
    """
    import ahocorasick_rs
    from detect_secrets.core.scan import get_filters_with_parameter
    from detect_secrets.settings import default_settings, get_plugins

    with default_settings():
        plugins = {type(p).__name__: p for p in get_plugins() if type(p).__name__ not in _DISABLED_PLUGINS}
        seen: dict[str, Any] = {}
        for f in get_filters_with_parameter("secret") + get_filters_with_parameter("line"):
            if f.path not in _DISABLED_FILTERS:
                seen.setdefault(f.path, f)
    literals = list(_LITERAL_TRIGGERS)
    # Standard + overlapping: `keyJ…` must report both `key` and `eyj`.
    ac = ahocorasick_rs.AhoCorasick(literals, matchkind=ahocorasick_rs.MatchKind.Standard)
    return _Detector(plugins, sorted(set(plugins) - _MAPPED), list(seen.values()), ac,
                     [_LITERAL_TRIGGERS[k] for k in literals])


def rule_names() -> list[str]:
    """Every name a pattern hit can carry: muninn's rules and detect-secrets' plugins (`ds:<Plugin>`)."""
    return sorted([*all_rules(), *(DS_PREFIX + name for name in _detector().plugins)])


def ds_findings(line: str, filename: str = "note.md", plugins: Iterable[str] | None = None) -> list[tuple[str, str]]:
    """(rule, secret) pairs detect-secrets reports for one line (all plugins, or the named ones),
    after its heuristic filters."""
    from detect_secrets.util.inject import call_function_with_arguments

    det = _detector()
    names = det.plugins if plugins is None else plugins
    out: list[tuple[str, str]] = []
    for name in names:
        plugin = det.plugins.get(name)
        if plugin is None:
            continue
        for found in plugin.analyze_line(filename=filename, line=line, line_number=0, context=None):
            secret = found.secret_value
            if not secret:
                continue
            kwargs = {"secret": secret, "line": line, "plugin": plugin, "filename": filename}
            if any(call_function_with_arguments(f, **kwargs) for f in det.filters):
                continue
            out.append((DS_PREFIX + name, secret))
    return out


@cache
def _keyword_needs_quote(filename: str) -> bool:
    """KeywordDetector picks its regexes by file type; for markdown and other unknown types every
    one of them requires a quote character, which rules out most prose lines that merely say
    `password`. (The muninn `labelled-secret` rule is what catches the unquoted `password: v`.)"""
    from detect_secrets.plugins import keyword
    from detect_secrets.util.filetype import determine_file_type

    table = getattr(keyword, "REGEX_BY_FILETYPE", None)
    quotes_required = getattr(keyword, "QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP", None)
    if table is None or quotes_required is None:
        return False  # an unknown detect-secrets layout: no shortcut
    return table.get(determine_file_type(filename), quotes_required) is quotes_required


_QUOTE = re.compile(r"['\"`]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _encodable(s: str) -> str:
    """ahocorasick-rs takes only encodable str; a lone surrogate (output decoded with
    surrogateescape) becomes U+FFFD, one character for one, so offsets stay put."""
    return s if s.isascii() or not _SURROGATE.search(s) else _SURROGATE.sub("\ufffd", s)


def triggered_lines(text: str, lowered: str | None = None, filename: str = "note.md") -> dict[int, set[str]]:
    """Line start offset -> the detect-secrets plugins worth running on that line."""
    det = _detector()
    lowered = text.lower() if lowered is None else lowered
    hits: list[tuple[int, tuple[str, ...]]] = []
    if len(lowered) == len(text):
        hits.extend((start, det.literal_plugins[i])
                    for i, start, _ in det.literals.find_matches_as_indexes(lowered, overlapping=True))
    else:  # offsets of the lower-cased text would not line up ('İ'): every line gets every plugin
        everything = tuple(det.plugins)
        hits.extend((s, everything) for s in (0, *(m.end() for m in re.finditer("\n", text))))
    for pattern, plugins in _SHAPE_TRIGGERS:
        hits.extend((m.start(), plugins) for m in pattern.finditer(text))
    newlines = [m.start() for m in re.finditer("\n", text)] if hits or det.unmapped else []
    out: dict[int, set[str]] = {}
    for pos, plugins in hits:
        i = bisect_right(newlines, pos - 1)
        start = newlines[i - 1] + 1 if i else 0
        out.setdefault(start, set()).update(plugins)
    if det.unmapped:
        for start in (0, *(n + 1 for n in newlines)):
            out.setdefault(start, set()).update(det.unmapped)
    if _keyword_needs_quote(filename):
        for start, plugins in out.items():
            if "KeywordDetector" in plugins:
                end = text.find("\n", start)
                if not _QUOTE.search(text, start, len(text) if end < 0 else end):
                    plugins.discard("KeywordDetector")
    return out


class PatternScanner:
    """Finds pattern spans; `use_ds=False` leaves detect-secrets out (muninn rules only)."""

    def __init__(self, rules: Iterable[Rule] | None = None, *, use_ds: bool = True, prefilter: bool = True,
                 filename: str = "note.md") -> None:
        self.rules = list(all_rules().values() if rules is None else rules)
        self.use_ds = use_ds
        self.prefilter = prefilter
        self.filename = filename
        if use_ds:
            _detector()
        # One Aho-Corasick pass finds every rule's trigger words; `in` per trigger per rule was
        # the largest single cost of the pattern pass on 4 KB documents.
        import ahocorasick_rs

        self._always = [r for r in self.rules if not r.triggers]
        words = sorted({t for r in self.rules for t in r.triggers})
        self._word_rules = [[r for r in self.rules if w in r.triggers] for w in words]
        self._words = ahocorasick_rs.AhoCorasick(words, matchkind=ahocorasick_rs.MatchKind.Standard) \
            if words else None

    def _triggered(self, lowered: str) -> list[Rule]:
        chosen = {id(r) for r in self._always}
        if self._words is not None:
            for i, _, _ in self._words.find_matches_as_indexes(lowered, overlapping=True):
                chosen.update(id(r) for r in self._word_rules[i])
        return [r for r in self.rules if id(r) in chosen]

    def scan(self, text: str) -> list[Span]:
        """Non-overlapping spans in text order; spans touching a `[REDACTED:…]` marker are dropped
        so a second pass leaves the first one's output alone (idempotence)."""
        markers = [m.span() for m in _MARKER.finditer(text)] if MARKER_PREFIX in text else []
        lowered = _encodable(text.lower())
        found: list[Span] = []
        for rule in self._triggered(lowered):
            found.extend(Span(s, e, rule.name) for s, e in rule.spans(text, lowered, checked=True))
        if self.use_ds:
            found.extend(self._ds_spans(text, lowered))
        return _resolve(found, markers)

    def _ds_spans(self, text: str, lowered: str) -> Iterable[Span]:
        if self.prefilter:
            work: Iterable[tuple[int, Iterable[str] | None]] = sorted(
                triggered_lines(text, lowered, self.filename).items())
        else:
            work = [(0, None), *((m.end(), None) for m in re.finditer("\n", text))]
        for line_start, plugins in work:
            line_end = text.find("\n", line_start)
            line_end = len(text) if line_end < 0 else line_end
            for start, end in _windows(text, line_start, line_end):
                yield from self._ds_line(text, start, end, plugins)

    def _ds_line(self, text: str, start: int, end: int, plugins: Iterable[str] | None) -> Iterable[Span]:
        line = text[start:end]
        for rule, secret in ds_findings(line, self.filename, plugins):
            if rule == _BASE64_RULE and encodes_prose(secret):
                continue   # base64 of a sentence someone encoded: random to the eye, prose to anyone who decodes it
            pos = line.find(secret)
            while pos >= 0:
                stop = pos + len(secret)
                if len(secret) < 8:
                    # Some plugins report only a capture group: `ghp`, `glpat` for a whole token.
                    m = _TOKEN_TAIL.match(line, stop)
                    stop = m.end() if m else stop
                yield Span(start + pos, start + stop, rule)
                pos = line.find(secret, pos + len(secret))


# detect-secrets' filters search the whole line once per finding: on a 1 MB one-line JSON file
# that is quadratic (51 s measured). Long lines go to it in overlapping windows cut at a separator;
# a secret shorter than the overlap is always whole in some window. (muninn's rules, PEM blocks
# and JWTs included, run over the whole text and are not windowed.)
_BASE64_RULE = "ds:Base64HighEntropyString"
_MAX_LINE = 4096
_OVERLAP = 1024
_SEP = re.compile(r"[\s,;]")


def _windows(text: str, start: int, end: int) -> Iterable[tuple[int, int]]:
    pos = start
    while end - pos > _MAX_LINE:
        hard = pos + _MAX_LINE
        cuts = [m.end() for m in _SEP.finditer(text, hard - _OVERLAP, hard)]
        cut = cuts[-1] if cuts else hard
        yield pos, cut
        m = _SEP.search(text, cut - _OVERLAP, cut)
        pos = m.end() if m else cut - _OVERLAP
    yield pos, end


def _resolve(spans: list[Span], markers: list[tuple[int, int]]) -> list[Span]:
    """Drop spans touching a marker, then merge overlaps (the union is redacted: two detectors that
    disagree on where a secret ends must not leave its tail behind). The first rule names it."""
    # Ties: muninn rule names before detect-secrets ones, then by name, whatever order plugins ran in.
    spans.sort(key=lambda s: (s.start, -s.end, s.rule.startswith(DS_PREFIX), s.rule))
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
