"""The leak gate: an independent second opinion over rendered files, before anything is synced.

It shares no matching code with the redactor (`guards/redact/redactor.py`, `guards/redact/patterns.py`,
`guards/rules/`): its own Aho-Corasick automaton (over str, where the redactor's is over bytes) and
its own short table of high-precision patterns. What it shares is the table of forms a value takes
(`guards/known/forms.py`: encodings, the normalised view, the folded view of paths), so a form the
redactor hides is one the gate looks for. It reads every file's relative path as well as its text.
In the seed project it was exactly such a separate scanner that caught what the
redactor missed. A file it flags is dropped, not repaired: the fix belongs in the redaction, and
the run fails closed.

Reports carry secret ids, rule names, paths and line numbers. Never a value.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import ahocorasick_rs

from muninn.core.config import Encoding
from muninn.guards.gate import gate_undeclared
from muninn.guards.known.forms import (
    ENCODINGS,
    ByteNeedles,
    forms_of,
    needle_bytes,
    needle_views,
    text_views,
    variants,
)

KNOWN_VALUE = "known-value"
KNOWN_VALUE_IN_PATH = "known-value-in-path"
# Values the gate accepts next to a label: redaction markers, documentation placeholders, and a YAML list
# of one name (`secrets: [restic-b2-repo]` names a secret, it does not hold one).
_HARMLESS = re.compile(r"^(?:\[redacted:[^\]]*\]|\[[\w.-]*\]$|\$\{?\w+\}?|<[^>]*>|\{\{.*\}\}|[*x.]{3,})", re.IGNORECASE)
_SEPARATOR = r"[\"'`*_\]]*\s*(?:[:=|>]|:=|=>|\sis\s)\s*[*_]*\s*[\"'`]?"
_KEY_QUALIFIER = re.compile(r"(?:api|access|private|signing|master|secret|client)[ _-]?$")
_WORDCHAR = re.compile(r"[a-z0-9]", re.IGNORECASE)


@dataclass(frozen=True)
class _Pattern:
    """One gate pattern. `re` only skips ahead fast to a leading literal, so patterns start with
    one: word boundaries are checked in code (`boundary`) and case-insensitive patterns run over
    the lower-cased text (`lowercase`). `words` must appear (lower-cased) for the pattern to run."""

    regex: re.Pattern[str]
    words: tuple[str, ...]
    group: int = 0
    mixed: bool = False       # the value must hold letters and digits
    prose: bool = False       # a value of plain words (`Setup/part-1`, `x86_64-linux-gnu`) is not a finding
    boundary: bool = False
    lowercase: bool = False


_PATTERNS: dict[str, _Pattern] = {
    "private-key-block": _Pattern(re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY"), ("-----begin",)),
    "aws-access-key-id": _Pattern(re.compile(r"(?:AKIA|ASIA|AROA|AIDA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
                                  ("akia", "asia", "aroa", "aida"), boundary=True),
    "github-token": _Pattern(re.compile(r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
                             ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), boundary=True),
    "slack-token": _Pattern(re.compile(r"xox[abposr]-[A-Za-z0-9-]{10,}"), ("xox",), boundary=True),
    "stripe-secret-key": _Pattern(re.compile(r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"),
                                  ("k_live_", "k_test_"), boundary=True),
    "google-api-key": _Pattern(re.compile(r"AIza[0-9A-Za-z_-]{35}"), ("aiza",), boundary=True),
    "jwt": _Pattern(re.compile(r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"), ("eyj",),
                    boundary=True),
    # A password hash's family by its own reading: a crypt id or an algorithm's name, `$` fields, a long mixed end.
    "password-hash-family": _Pattern(
        re.compile(r"(?:\$(?:1|2[abxy]|3|5|6|7|y|gy|apr1|md5|sha1|argon2(?:id|i|d)|scrypt|pbkdf2[-\w]*|p|h|s)\$"
                   r"|(?:pbkdf2|scrypt|argon2|bcrypt|sha1|sha256|sha512|md5|scram-sha-256)[\w:-]*\$)"
                   r"[^\s\"'`]{0,120}?([a-z0-9+/.=]{22,})"),
        ("$",), group=1, mixed=True, prose=True, lowercase=True),
    # A webhook's path token: a long mixed segment after `/hooks/` or `/webhook(s)/`.
    "webhook-path-token": _Pattern(re.compile(r"/(?:web)?hooks?/(?:[\w.~-]+/){0,3}([A-Za-z0-9_-]{20,})(?![\w-])"),
                                   ("/hook", "/webhook"), group=1, mixed=True, prose=True),
    "url-password": _Pattern(re.compile(r"://[^\s:/@'\"]+:([^\s@/'\"]+)@"), ("://",), group=1),
    "authorization-header": _Pattern(
        re.compile(r"authorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|digest)\s+)?([^\s\"'`]{8,})"),
        ("authorization",), group=1, mixed=True, boundary=True, lowercase=True),
    # Spaces, not a line break: `…/terminfo/l/linux-basic` then the next line's checksum is no header.
    "bearer-token": _Pattern(re.compile(r"(?:bearer|basic)[ \t]+([a-z0-9._~+/=-]{12,})"), ("bearer", "basic"),
                             group=1, mixed=True, boundary=True, lowercase=True, prose=True),
    # Token shapes the redaction rules read too (tests/test_gate_pins_rules.py pins each to its rule),
    # written here again so that a slip in one regex is not a slip in both.
    "azure-account-key": _Pattern(re.compile(r"(?:accountkey=[a-z0-9+/]{40,}=*|[?&]sig=[a-z0-9%+/=]{20,})"),
                                  ("accountkey=", "sig="), mixed=True, lowercase=True),
    "azure-client-secret": _Pattern(re.compile(r"[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])"),
                                    ("q~",), mixed=True, boundary=True),
    # The token piece of a chat webhook's path (Discord's id, then the token; Mattermost, Rocket.Chat, any
    # `/hooks/…`): digits in it and not a slug of words (`/hooks/post-receive`).
    "webhook-token": _Pattern(re.compile(r"/(?:web)?hooks?/(?:[\w-]{1,40}/)?([A-Za-z0-9_-]{20,})(?![\w/.-])"),
                              ("/hook", "/webhook"), group=1, mixed=True, prose=True),
    "teams-webhook": _Pattern(re.compile(r"\.office\.com/webhook(?:b2)?/([^\s\"'<>)\]]{20,})"),
                              ("office.com/webhook",), group=1, mixed=True),
    # Prefixed tokens: GitLab, OpenAI and Anthropic, npm, PyPI, SendGrid, Vault, Hugging Face, DigitalOcean.
    "vendor-token": _Pattern(
        re.compile(r"(?:gl(?:pat|dt|ft|rt|soat|cbt)-[\w-]{20,}|sk-(?:proj-|ant-[a-z0-9]+-)?[\w-]{20,}"
                   r"|npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])|pypi-[\w-]{50,}|SG\.[\w-]{22}\.[\w-]{43}|hv[sbr]\.[\w-]{24,}"
                   r"|hf_[A-Za-z0-9]{30,}|do[po]_v1_[0-9a-f]{64})"),
        ("glpat-", "gldt-", "glft-", "glrt-", "glsoat-", "glcbt-", "sk-", "npm_", "pypi-", "sg.", "hvs.", "hvb.",
         "hvr.", "hf_", "_v1_"), mixed=True, prose=True, boundary=True),
    # crypt(3) and PHC strings (`$apr1$salt$hash`, `$6$rounds=5000$salt$hash`, `$2b$12$…`, `$argon2id$v=19$…`):
    # the id, one to four `$`-ended fields, and a hash of 8+ characters of the crypt alphabet.
    "password-hash": _Pattern(
        re.compile(r"\$(?:apr1|1|2[abxy]?|5|6|7|y|gy|md5|sha1|argon2(?:id|i|d)|scrypt|pbkdf2(?:-sha\d+)?)\$"
                   r"((?:[^\s$:'\"]*\$){1,4}[./A-Za-z0-9+=-]{8,})"),
        ("$1$", "$2", "$5$", "$6$", "$7$", "$y$", "$gy$", "$apr1$", "$md5", "$sha1$", "$argon2", "$scrypt$",
         "$pbkdf2"), group=1),
    "ldap-password-hash": _Pattern(
        re.compile(r"\{(?:s?sha(?:256|512)?|s?md5|crypt|pbkdf2[\w-]*)\}([a-z0-9+/=.$]{12,})"),
        ("{ssha", "{sha", "{smd5", "{md5}", "{crypt}", "{pbkdf2"), group=1, lowercase=True),
    # Starts at the noun; `key` needs a qualifier in front (`api key`, `SECRET_KEY`), checked in code.
    "assigned-secret": _Pattern(
        re.compile(r"(password|passwd|pwd|passphrase|secret|token|key)s?(?![a-z])" + _SEPARATOR
                   + r"([^\s\"'`|,;<]{8,})"),
        ("pass", "pwd", "secret", "token", "key"), group=2, mixed=True, lowercase=True),
}


@dataclass(frozen=True)
class Finding:
    reason: str               # "known-value" or the pattern's name
    secret_id: str | None     # the known secret's id; None for a pattern
    line: int                 # 1-based


@dataclass
class Dropped:
    path: str
    findings: list[Finding]

    @property
    def reason(self) -> str:
        parts = sorted({f"{f.reason}:{f.secret_id}" if f.secret_id else f.reason for f in self.findings})
        lines = sorted({f.line for f in self.findings})
        return f"{', '.join(parts)} (line {', '.join(map(str, lines[:5]))}{', …' if len(lines) > 5 else ''})"


@dataclass
class GateReport:
    scanned: int = 0
    dropped: list[Dropped] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.dropped

    def to_json(self) -> dict[str, Any]:
        return {"scanned": self.scanned, "clean": self.clean,
                "dropped": [{"path": d.path, "reason": d.reason, "findings": [asdict(f) for f in d.findings]}
                            for d in self.dropped]}


def _has_letters_and_digits(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def scan(text: str, allow: Callable[[str], bool] | None = None) -> list[Finding]:
    """Pattern findings only (no known values), one per match. `allow` is the owner's allowlist
    (guards/redact/allowlist.py): a match whose exact text it allows is not a finding."""
    out: list[Finding] = []
    lines = _Lines(text)
    lowered = text.lower()
    # 'İ' and friends change the length when lower-cased: then search the original, ignoring case.
    same = len(lowered) == len(text)
    present = {_TRIGGER_WORDS[i] for i, _, _ in
               _TRIGGERS.find_matches_as_indexes(_encodable(lowered), overlapping=True)}
    for name, p in _PATTERNS.items():
        if present.isdisjoint(p.words):
            continue
        haystack, regex = text, p.regex
        if p.lowercase:
            haystack, regex = (lowered, p.regex) if same else (text, _ignorecase(p.regex))
        for m in regex.finditer(haystack):
            start, end = m.span(p.group)
            if p.boundary and m.start() > 0 and _WORDCHAR.match(haystack, m.start() - 1):
                continue
            value = text[start:end]
            if _HARMLESS.match(value) or (p.mixed and not _has_letters_and_digits(value)):
                continue
            if p.prose and _plain_words(value):
                continue
            if name == "assigned-secret" and (not _label_ok(haystack, m) or _plain_path(value)):
                continue
            if allow is not None and allow(value):
                continue
            out.append(Finding(name, None, lines.at(start)))
    # Undeclared secrets, by the gate's own reading (guards/gate/gate_undeclared.py), on lines no named
    # pattern has flagged already (the file is dropped either way; the named reason says more). The
    # allowlist is asked about the line's text pieces: what the owner allowed in the detector's reading stays.
    named = {f.line for f in out}
    for line in gate_undeclared.scan_lines(text):
        if line not in named and (allow is None or not _allowed_on(text, line, allow)):
            out.append(Finding(gate_undeclared.RULE, None, line))
    return sorted(out, key=lambda f: (f.line, f.reason))


def _allowed_on(text: str, line: int, allow: Callable[[str], bool]) -> bool:
    """Some piece of the line is an allowed text (the gate and the detector cut a line differently)."""
    words = re.split(r"[\s|`'\"<>()\[\]{},;*]+", text.split("\n")[line - 1])
    return any(allow(piece) for w in words for piece in {w, *re.split(r"[:=%,]", w)} if piece)


# The gate's own reading of "plain words" (deliberately not guards/rules' code, which it checks):
# each alphanumeric run is letters, a number of at most 5 digits, or letters and a version number
# (`x86`, `sha256`, `k8s`, `2fa`), with the case changing at most 3 times (`GitHub`, `IPv6`). A
# credential runs letters and digits together more than that (`abc123XYZ`, `Xk29fLq0`), changes case
# often (`AbCdEfGh`) or holds a long number (`xoxb-123456789012-…`). At least as lenient as the
# redactor's `ordinary_words`, so prose the redactor leaves is never a finding here (a file would be dropped).
_PLAIN_RUN = re.compile(r"[a-z]+|\d{1,5}|[a-z]+\d{1,5}[a-z]{0,2}|\d{1,4}[a-z]{1,4}", re.IGNORECASE)
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_CASE_CHANGE = re.compile(r"[a-z](?=[A-Z])|[A-Z](?=[a-z])")
_PATH_START = re.compile(r"(?:~|\.\.?|\$\{?\w+\}?)?/")


def _plain_words(value: str) -> bool:
    runs = [r for r in _NOT_ALNUM.split(value) if r]
    return bool(runs) and all(_PLAIN_RUN.fullmatch(r) and len(_CASE_CHANGE.findall(r)) <= 3 for r in runs)


def _plain_path(value: str) -> bool:
    """`/run/secrets/db_v2`, `~/.ssh/id_ed25519`: where a secret is kept, in plain words."""
    start = _PATH_START.match(value)
    if start is None:
        return False
    rest = value.rstrip(".:")[start.end():]
    return len([s for s in rest.split("/") if s]) >= (2 if start.end() == 1 else 1) and _plain_words(rest)


def _label_ok(haystack: str, m: re.Match[str]) -> bool:
    before = haystack[max(0, m.start() - 16):m.start()].lower()
    qualified = bool(_KEY_QUALIFIER.search(before))
    if before and before[-1].isalnum() and not qualified:
        return False  # `monkey: …`, `mytoken = …`
    return m.group(1) != "key" or qualified


_SURROGATE = re.compile("[\ud800-\udfff]")


def _encodable(s: str) -> str:
    """ahocorasick-rs refuses lone surrogates: each becomes U+FFFD (same length, same lines)."""
    return s if s.isascii() or not _SURROGATE.search(s) else _SURROGATE.sub("\ufffd", s)


@cache
def _ignorecase(regex: re.Pattern[str]) -> re.Pattern[str]:
    return re.compile(regex.pattern, regex.flags | re.IGNORECASE)


_TRIGGER_WORDS = sorted({w for p in _PATTERNS.values() for w in p.words})
_TRIGGERS = ahocorasick_rs.AhoCorasick(_TRIGGER_WORDS, matchkind=ahocorasick_rs.MatchKind.Standard)


class _Lines:
    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: list[int] | None = None

    def at(self, pos: int) -> int:
        if self._starts is None:
            self._starts = [m.start() for m in re.finditer("\n", self.text)]
        return bisect_right(self._starts, pos - 1) + 1


class LeakGate:
    """Flags known values (`known`: value -> secret id) in any of `encodings`, on the normalised view
    too, and pattern hits, in files or trees; and values in any case/slug variant in paths."""

    def __init__(self, known: Mapping[str, str], *, patterns: bool = True,
                 encodings: tuple[Encoding, ...] = ENCODINGS, allow: Callable[[str], bool] | None = None) -> None:
        needles: dict[str, str] = {}
        for value, secret_id in known.items():
            if value:
                for form in forms_of(value, encodings):
                    needles.setdefault(form, secret_id)
        self._values = list(needles)
        self._ids = list(needles.values())
        self._ac = ahocorasick_rs.AhoCorasick(self._values) if self._values else None
        self._multiline = any("\n" in v or "\r" in v for v in self._values)
        # Raw values and their transforms (reversed, rot13), in every view `forms.needle_views` reads them in.
        viewed = [(t, i) for v, i in known.items() if v for t in variants(v, encodings)]
        self._view = _ViewNeedles({n: i for v, i in viewed for n in needle_views(v)})
        self._fold = _ViewNeedles({n: i for v, i in viewed for n in needle_views(v, fold=True)})
        self._bytes = ByteNeedles({b: i for v, i in viewed for b in needle_bytes(v)})
        self.patterns = patterns
        # Pattern findings only: a known value is a finding whatever the allowlist says.
        self.allow = allow

    def scan(self, text: str) -> list[Finding]:
        out: list[Finding] = []
        if self._ac is not None:
            lines = _Lines(text)
            wrapped = "\n" in text or "\r" in text
            # Overlapping: a value hidden inside another value's occurrence is still reported. Text with
            # line breaks is searched with them taken out (a value wrapped over lines is still that
            # value), and as it stands only if some value holds a line break itself.
            if not wrapped or self._multiline:
                for idx, start, _ in self._ac.find_matches_as_indexes(_encodable(text), overlapping=True):
                    out.append(Finding(KNOWN_VALUE, self._ids[idx], lines.at(start)))
            if wrapped:
                flat = _encodable(text.replace("\r", "").replace("\n", ""))
                found = self._ac.find_matches_as_indexes(flat, overlapping=True)
                if found:
                    kept = [i for i, ch in enumerate(text) if ch not in "\r\n"]   # flat offset -> text offset
                    out += [Finding(KNOWN_VALUE, self._ids[idx], lines.at(kept[start])) for idx, start, _ in found]
            # Split by markup, zero-width characters or an indented wrap: still the value.
            # Any case, slug or separator spelling (a value that came in through a file name).
            found = self._view.find(text) + self._fold.find(text, fold=True)
            found += [(secret_id, start) for secret_id, start, _ in self._bytes.find(text)]   # printed dumps
            out += [Finding(KNOWN_VALUE, secret_id, lines.at(start)) for secret_id, start in found]
        if self.patterns:
            # As in `scan`: the guess reading adds a line only where nothing named flagged it already.
            flagged = {f.line for f in out}
            out.extend(f for f in scan(text, self.allow) if f.reason != gate_undeclared.RULE or f.line not in flagged)
        return sorted(set(out), key=lambda f: (f.line, f.reason, f.secret_id or ""))

    def scan_path(self, rel: str) -> list[Finding]:
        """A known value in a relative path, in any case, slug or separator variant (line 0)."""
        found = self._fold.find(rel, fold=True)
        return sorted({Finding(KNOWN_VALUE_IN_PATH, secret_id, 0) for secret_id, _ in found},
                      key=lambda f: f.secret_id or "")

    def check_file(self, path: Path) -> list[Finding]:
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            # Fail closed: what cannot be read cannot be shown to be clean.
            return [Finding(f"unreadable: {exc.strerror or type(exc).__name__}", None, 0)]
        # errors="replace" keeps the ASCII around a stray byte scannable instead of skipping the file.
        return self.scan(data.decode("utf-8", errors="replace"))

    def check_tree(self, root: Path, files: Iterable[Path] | None = None) -> GateReport:
        """Every file under `root` (or just `files`), with paths in the report relative to `root`."""
        root = Path(root)
        report = GateReport()
        paths = sorted(p for p in root.rglob("*") if p.is_file()) if files is None else list(files)
        for path in paths:
            report.scanned += 1
            rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
            findings = self.scan_path(rel) + self.check_file(path)
            if findings:
                report.dropped.append(Dropped(rel, findings))
        return report


class _ViewNeedles:
    """Needles in a view of the text (normalised or folded); finds map back through the offset map."""

    def __init__(self, needles: dict[str | None, str]) -> None:
        kept = {n: i for n, i in needles.items() if n}   # None: too short for a view
        self._ids = list(kept.values())
        self._ac = ahocorasick_rs.AhoCorasick(list(kept)) if kept else None

    def find(self, text: str, fold: bool = False) -> list[tuple[str, int]]:
        """(secret id, offset in the original text) per match in each view of `text`
        (`forms.text_views`); the offset map is built only on a match."""
        if self._ac is None or not text:
            return []
        out: list[tuple[str, int]] = []
        for view_of, mapped in text_views(text, fold):
            found = self._ac.find_matches_as_indexes(_encodable(view_of(text)), overlapping=True)
            if found:
                where = mapped(text)[1]
                out += [(self._ids[i], where[start]) for i, start, _ in found]
        return out
