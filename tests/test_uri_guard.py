"""URI canonicalisation and prefix checks: every spelling of "somewhere else" is refused."""

from __future__ import annotations

import pytest

from muninn.guards.policy import uri as g

PREFIXES = ("viking://resources/agents/bob", "viking://resources/shared")
B = "viking://resources/agents/bob"

ADVERSARIAL = [
    # sibling with a shared name prefix: segment boundaries
    "viking://resources/agents/bob-evil",
    "viking://resources/agents/bob-evil/x.md",
    "viking://resources/agents/bobby",
    "viking://resources/agents/bob_",
    "viking://resources/agents/bob2/notes",
    "viking://resources/shared-private/x",
    "viking://resources/sharedx",
    # dot segments climbing out
    f"{B}/../alice",
    f"{B}/../../agents/alice/x",
    f"{B}/./../alice",
    f"{B}/x/../../alice",
    f"{B}/../bob-evil",
    "viking://resources/shared/../roadmap/plan.md",
    "viking://resources/shared/./../../agent/skills/x",
    "viking://..",
    "viking://../resources/agents/bob",
    "viking://resources/../../etc/passwd",
    # percent-encoded once, twice, three times
    f"{B}/%2e%2e/alice",
    f"{B}/%2E%2E/alice",
    f"{B}/%2e./alice",
    f"{B}/.%2e/alice",
    f"{B}%2f..%2falice",
    f"{B}%2F..%2Falice",
    f"{B}/%252e%252e/alice",
    f"{B}%252f%252e%252e%252falice",
    f"{B}/%25252e%25252e/alice",
    f"{B}%25252f..%25252falice",
    f"{B}/%2e%2e%2f%2e%2e/x",
    "viking%3a%2f%2fresources/agents/alice",
    "viking%3A//resources/agents/alice",
    "%76iking://resources/agents/alice",
    f"{B}-evil%2fx",
    f"{B}%2d%65vil",
    # deeply nested encoding that never settles
    f"{B}/%2525252525252e%2525252525252e/alice",
    # backslashes and mixed separators
    f"{B}\\..\\alice",
    f"{B}/..\\alice",
    f"{B}\\../alice",
    "viking:\\\\resources\\agents\\alice",
    f"{B}%5c..%5calice",
    f"{B}%5C..%5Calice",
    f"{B}%255c..%255calice",
    # Unicode: fullwidth and compatibility forms NFKC folds into / and .
    f"{B}\uff0f..\uff0falice",
    f"{B}/\uff0e\uff0e/alice",
    f"{B}/\u2025/alice",  # two-dot leader → ".."
    f"{B}%ef%bc%8f..%ef%bc%8falice",
    f"{B}/%ef%bc%8e%ef%bc%8e/alice",
    f"{B}\ufe68..\ufe68alice",  # small reverse solidus → backslash
    "viking://resources/agents/\uff42\uff4f\uff42-evil",  # fullwidth "bob"-evil
    # slash look-alikes NFKC leaves alone
    f"{B}\u2215..\u2215alice",
    f"{B}\u2044..\u2044alice",
    f"{B}/x\u29f8y",
    f"{B}/x\u2216y",
    # control characters
    f"{B}\x00/../alice",
    f"{B}/x\x00.md",
    f"{B}/x\n.md",
    f"{B}/x\r.md",
    f"{B}/x\t.md",
    f"{B}/x\x1b[31m.md",
    f"{B}/x\x7f.md",
    f"{B}/x\x85.md",
    f"{B}%00/x",
    f"{B}/x%0a.md",
    f"{B}/x%0d%0a.md",
    f"{B}/x%250a.md",
    # invisible and format characters
    f"{B}\u200b-evil",
    f"{B}/\u200b../alice",
    f"{B}/x\u200c.md",
    f"{B}/x\u200d.md",
    f"{B}/x\u2060.md",
    f"{B}/x\ufeff.md",
    f"{B}/x\u00ad.md",
    f"{B}/\u202e/dm.x",
    f"{B}/x\u2066.md",
    f"{B}/x%e2%80%8b.md",
    f"{B}/x%e2%80%ae.md",
    f"{B}/x\u2028.md",
    f"{B}/x\u2029.md",
    f"{B}/x\ue000.md",
    f"{B}/x\u00a0.md",  # NBSP folds to a space, but the raw form is refused first
    f"{B}/x\u3000y",
    # trailing dots, spaces, dot-only segments
    f"{B}/.../alice",
    f"{B}/..../x",
    f"{B}/.. /alice",
    f"{B}/ ../alice",
    f"{B}/x /y",
    f"{B}/x. /y",
    f"{B}/../alice.",
    "viking://resources/agents/bob./../alice",
    # scheme tricks and other schemes
    "file:///etc/passwd",
    "http://resources/agents/bob",
    "https://evil.example/viking://resources/agents/bob",
    "vikingx://resources/agents/bob",
    "viking:/resources/agents/bob",
    "viking:resources/agents/bob",
    "//resources/agents/bob",
    "/resources/agents/bob",
    "resources/agents/bob",
    "agents/bob",
    "viking://",
    "viking:///",
    "viking://.",
    "",
    "   ",
    # authority, query, fragment, globs, percent left over
    "viking://user@resources/agents/bob",
    "viking://resources:80/agents/bob",
    f"{B}?x=1",
    f"{B}#frag",
    f"{B}/*",
    f"{B}/../*",
    f"{B}/x%zz",
    f"{B}/100%",
    f"{B}/%",
    f"{B}/x%c3",  # truncated UTF-8
    f"{B}/x%ff%fe",
    f"{B}/<script>",
    f"{B}/a|b",
    # other areas, plainly
    "viking://resources/agents/alice",
    "viking://resources/roadmap",
    "viking://resources",
    "viking://agent/skills/evil",
    "viking://user/memories",
    "viking://session/x",
    "viking://resources/Agents/bob",
    "viking://resources/AGENTS/BOB",
    # overlong UTF-8 dots, one-dot leaders, fullwidth percent signs that decode after NFKC
    f"{B}/%c0%ae%c0%ae/alice",
    f"{B}/%e0%80%ae%e0%80%ae/alice",
    f"{B}/\u2024\u2024/alice",
    f"{B}/\uff05\uff12\uff45\uff05\uff12\uff45/alice",
    f"{B}\uff05\uff12\uff46..\uff05\uff12\uff46alice",
    # over-long
    f"{B}/" + "a" * 3000,
]


@pytest.mark.parametrize("uri", ADVERSARIAL)
def test_adversarial_uri_is_refused(uri: str) -> None:
    decision = g.check(uri, PREFIXES)
    assert not decision.allowed, (uri, decision)
    assert decision.reason


def test_the_adversarial_list_is_large_enough() -> None:
    assert len(ADVERSARIAL) >= 100
    assert len(set(ADVERSARIAL)) == len(ADVERSARIAL)


ALLOWED = [
    (B, B),
    (f"{B}/", B),
    (f"{B}///", B),
    (f"{B}/notes/x.md", f"{B}/notes/x.md"),
    (f"{B}//notes//x.md", f"{B}/notes/x.md"),
    (f"{B}/./notes/./x.md", f"{B}/notes/x.md"),
    (f"{B}/notes/../x.md", f"{B}/x.md"),
    ("VIKING://resources/agents/bob/x.md", f"{B}/x.md"),
    ("Viking://resources/agents/bob/x.md", f"{B}/x.md"),
    ("viking:///resources/agents/bob/x.md", f"{B}/x.md"),
    (f"{B}/x%2emd", f"{B}/x.md"),
    (f"{B}/my%20notes.md", f"{B}/my notes.md"),
    (f"{B}/obs/2026-10/a.md", f"{B}/obs/2026-10/a.md"),
    (f"{B}/x.md.", f"{B}/x.md"),
    (f"{B}.", B),
    (f"{B}\\notes\\x.md", f"{B}/notes/x.md"),
    (f"{B}/caf\u00e9.md", f"{B}/caf\u00e9.md"),
    (f"{B}/cafe\u0301.md", f"{B}/caf\u00e9.md"),  # NFKC composes
    (f"{B}/\uff58.md", f"{B}/x.md"),  # fullwidth x
    ("viking://resources/shared/runbooks/db.md", "viking://resources/shared/runbooks/db.md"),
    ("viking://resources/agents/alice/../bob/x", f"{B}/x"),
]


@pytest.mark.parametrize(("uri", "canonical"), ALLOWED)
def test_allowed_uri_is_accepted_in_canonical_form(uri: str, canonical: str) -> None:
    decision = g.check(uri, PREFIXES)
    assert decision.allowed, (uri, decision)
    assert decision.canonical == canonical


@pytest.mark.parametrize("uri", [c for _, c in ALLOWED])
def test_canonical_form_is_a_fixed_point(uri: str) -> None:
    assert g.canonicalize(uri) == uri


@pytest.mark.parametrize(("uri", "prefix", "under"), [
    ("viking://resources/agents/bob", "viking://resources/agents/bob", True),
    ("viking://resources/agents/bob/x", "viking://resources/agents/bob", True),
    ("viking://resources/agents/bob-evil", "viking://resources/agents/bob", False),
    ("viking://resources/agents/bo", "viking://resources/agents/bob", False),
    ("viking://resources/agents", "viking://resources/agents/bob", False),
])
def test_prefix_match_is_on_segment_boundaries(uri: str, prefix: str, under: bool) -> None:
    assert g.is_under(uri, prefix) is under


def test_non_string_is_refused_not_crashed() -> None:
    assert not g.check(["viking://resources/agents/bob"], PREFIXES).allowed  # type: ignore[arg-type]
    assert not g.check(None, PREFIXES).allowed  # type: ignore[arg-type]


def test_no_prefixes_means_nothing_is_allowed() -> None:
    assert not g.check(B, ()).allowed
