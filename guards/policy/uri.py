"""URI canonicalisation and prefix checks: the one form the guard compares and the server receives.

An agent can spell `viking://resources/agents/bob` many ways: percent-encoded (once or
several times), with `.`/`..` segments, doubled slashes, `VIKING://`, fullwidth solidus that NFKC
folds into `/`, zero-width characters, backslashes. The guard canonicalises first, checks the
canonical form against the profile's prefixes on segment boundaries, and the tool then uses the
canonical form, so what was checked is exactly what the server sees. Anything that cannot be
brought to one unambiguous form is refused rather than guessed at.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote

SCHEME = "viking"
MAX_LEN = 2048
_MAX_DECODE_ROUNDS = 4

# Characters that look like a path separator but are not one: NFKC leaves these alone, and a
# server or a human reading the URI might still take them for `/` or `\`.
_SLASH_LOOKALIKES = frozenset("\u2215\u2044\u29f8\u29f9\u2216\u244a\u27cb\u27cd\u3033\u30fb")
# Unicode categories that have no business in a path: controls, format (zero-width, bidi
# overrides, BOM, soft hyphen), surrogates, private use, unassigned, line/paragraph separators.
_BAD_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_RESERVED = frozenset("?#%\"<>|*")


class UriRejected(ValueError):
    """The URI cannot be brought to one canonical form. `reason` says why, for the agent."""

    def __init__(self, uri: object, reason: str) -> None:
        self.uri, self.reason = uri, reason
        super().__init__(f"refused URI: {reason}")


@dataclass(frozen=True)
class UriDecision:
    allowed: bool
    reason: str
    canonical: str | None = None


def _check_chars(text: str, original: object) -> None:
    for ch in text:
        if ch in _SLASH_LOOKALIKES:
            raise UriRejected(original, f"contains a slash look-alike (U+{ord(ch):04X})")
        cat = unicodedata.category(ch)
        if cat in _BAD_CATEGORIES:
            raise UriRejected(original, f"contains a control or invisible character (U+{ord(ch):04X}, {cat})")
        if cat == "Zs" and ch != " ":
            raise UriRejected(original, f"contains an unusual space (U+{ord(ch):04X})")


def _decode(uri: str) -> str:
    """Percent-decode and NFKC-fold until nothing changes: `%252e` is `%2e` is `.`."""
    text = uri
    for _ in range(_MAX_DECODE_ROUNDS + 1):
        _check_chars(text, uri)
        try:
            decoded = unquote(text, errors="strict")
        except UnicodeDecodeError:
            raise UriRejected(uri, "percent-encoding that is not UTF-8") from None
        folded = unicodedata.normalize("NFKC", decoded)
        if folded == text:
            return text
        text = folded
    raise UriRejected(uri, f"still changes after {_MAX_DECODE_ROUNDS} rounds of percent-decoding")


def canonicalize(uri: str) -> str:
    """The canonical `viking://a/b/c` form of `uri`, or UriRejected with the reason."""
    if not isinstance(uri, str):
        raise UriRejected(repr(uri)[:80], "not a string")
    return _canonicalize(uri)


class FolderUri(UriRejected):
    """A URI named where one file is wanted ends in a slash; `canonical` is its folder."""

    def __init__(self, uri: str, canonical: str) -> None:
        self.canonical = canonical
        super().__init__(uri, "a folder, not a file")


def file_uri(uri: str) -> str:
    """The canonical form of a URI that should name one file: UriRejected when it cannot be made canonical,
    FolderUri when it ends in a slash (canonical form drops the slash, so this is the last chance to see it)."""
    canonical = canonicalize(uri)
    if uri.rstrip().endswith("/"):
        raise FolderUri(uri, canonical)
    return canonical


@lru_cache(maxsize=4096)
def _canonicalize(uri: str) -> str:
    if not uri or not uri.strip():
        raise UriRejected(uri, "empty")
    if len(uri) > MAX_LEN:
        raise UriRejected(uri[:80], f"longer than {MAX_LEN} characters")
    text = _decode(uri)
    # One separator: a backslash is never part of a viking:// name, and Windows-minded code
    # downstream would read it as `/`, so it is treated as one here, before `..` is resolved.
    text = text.replace("\\", "/")
    scheme, sep, rest = text.partition(":")
    if not sep or scheme.lower() != SCHEME:
        raise UriRejected(uri, f"only {SCHEME}:// URIs are accepted")
    if not rest.startswith("//"):
        raise UriRejected(uri, f"expected {SCHEME}:// followed by a path")
    bad = sorted(set(rest) & _RESERVED)
    if bad:
        raise UriRejected(uri, f"contains reserved characters {''.join(bad)!r} (query, fragment, % or glob)")
    segments: list[str] = []
    for raw in rest.split("/"):
        if raw in ("", "."):
            continue
        if raw == "..":
            if not segments:
                raise UriRejected(uri, "`..` climbs above the root")
            segments.pop()
            continue
        if raw != raw.strip():
            raise UriRejected(uri, f"segment {raw!r} has leading or trailing spaces")
        seg = raw.rstrip(".")  # Windows drops trailing dots: `bob.` would be `bob` to some readers
        if not seg:
            raise UriRejected(uri, f"segment {raw!r} is only dots")
        if seg != seg.strip():
            raise UriRejected(uri, f"segment {raw!r} has spaces before its trailing dots")
        if not segments and ("@" in seg or ":" in seg):
            raise UriRejected(uri, "user info or a port in a viking:// URI")
        segments.append(seg)
    if not segments:
        raise UriRejected(uri, "no path after viking://")
    return f"{SCHEME}://" + "/".join(segments)


def is_under(canonical: str, prefix: str) -> bool:
    """True when `canonical` is `prefix` or lies below it: whole segments only (`bob` is not `bob-evil`)."""
    prefix = prefix.rstrip("/")
    return canonical == prefix or canonical.startswith(prefix + "/")


def check(uri: str, prefixes: Iterable[str], action: str = "read") -> UriDecision:
    """Canonicalise `uri` and check it against `prefixes`. Never raises: a refusal carries the reason."""
    try:
        canon = canonicalize(uri)
    except UriRejected as exc:
        return UriDecision(False, exc.reason)
    prefixes = tuple(prefixes)
    for prefix in prefixes:
        if is_under(canon, prefix):
            return UriDecision(True, f"{action} allowed under {prefix}", canon)
    where = ", ".join(prefixes) if prefixes else "nowhere"
    return UriDecision(False, f"{canon} is outside this profile's {action} areas ({where})", canon)
