"""The leak gate's pattern table, pinned against the redaction rules (issue 46 §4).

The gate (guards/gate/) reads with its own code by design, so a new token shape needs a place in both:
a rule in guards/rules/ and a pattern in the gate's `_PATTERNS`. Every rule is named here once, either
pinned to the gate patterns that read its shape (and a sample of the shape both must find) or exempted with
the reason the gate has none. A rule added without a row, or a gate pattern dropped, fails here.
"""

from __future__ import annotations

import pytest

from muninn.guards.gate import gate_undeclared, leak_gate
from muninn.guards.rules import all_rules

# A random-looking body: upper, lower and digits mixed, as a generated token's is.
_BODY = "Qx7mZp2Lw9Rk4Tn8Vb3Hc6Jd1Fg5Ys0UeA7wXc2N"

# rule -> (the gate's findings that read the same shape, a sample both the rule and the gate find)
PINNED: dict[str, tuple[frozenset[str], str]] = {
    "aws-key": (frozenset({"aws-access-key-id"}), "id AKIAQX7MZP2LW9RK4TN8 here"),
    "gcp-key": (frozenset({"google-api-key"}), f"key AIza{_BODY[:35]} here"),
    "github-token": (frozenset({"github-token"}), f"token ghp_{_BODY}"),
    "jwt": (frozenset({"jwt"}), f"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.{_BODY}"),
    "slack-token": (frozenset({"slack-token"}), f"xoxb-{_BODY}"),
    "stripe-key": (frozenset({"stripe-secret-key"}), f"sk_live_{_BODY}"),
    "private-key": (frozenset({"private-key-block"}),
                    f"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA{_BODY}\n-----END RSA PRIVATE KEY-----"),
    "url-credentials": (frozenset({"url-password"}), f"postgres://admin:{_BODY}@db.example.com/x"),
    "auth-header": (frozenset({"authorization-header", "bearer-token"}), f"Authorization: Bearer {_BODY}"),
    "labelled-secret": (frozenset({"assigned-secret"}), f"api key: {_BODY}"),
    "password-hash": (frozenset({"password-hash"}), f"pbkdf2_sha256$870000${_BODY[:16]}${_BODY}="),
    "webhook-url": (frozenset({"webhook-path-token"}), f"https://chat.example.com/hooks/{_BODY[:17]}/{_BODY}"),
    # The gate's own reading of the class (guards/gate/gate_undeclared.py), not the detector's code.
    "undeclared-secret": (frozenset({gate_undeclared.RULE}), f"sshpass -p {_BODY} ssh host"),
}

# rule -> why the gate has no pattern of its own for it. A value muninn knows is still caught by the
# gate's known-value pass; these name what the gate's patterns alone would not read.
EXEMPT: dict[str, str] = {
    # Token shapes with no gate pattern yet: a long random body is read by the gate's undeclared reading
    # (a 32+ character mixed token), but `AccountKey=`, `sig=` and webhook paths are not read as such.
    "azure-key": "no gate pattern: AccountKey= and SAS sig= are read only by the rule",
    "vendor-token": "no gate pattern: glpat-, sk-, npm_, hf_... bodies are read by gate_undeclared's bare token",
    # Context, not a token shape: the secret is whatever follows a word or a command; the gate's
    # assigned-secret reads the labelled forms it can read with high precision.
    "prose-password": "context rule: a password named in a sentence",
    "shell-password": "context rule: a password on a command line (gate_undeclared reads the option forms)",
    "expect-send": "context rule: an expect script's send after a password prompt",
    "table-credential": "context rule: a table cell under a password column",
    "yaml-block-secret": "context rule: a block scalar under a secret key",
    "recovery-code": "context rule: the lines under a recovery-codes heading",
}

# Gate patterns that read a shape no single rule owns (a second reading of the labelled forms).
GATE_ONLY: frozenset[str] = frozenset()


def _gate_names() -> set[str]:
    return set(leak_gate._PATTERNS) | {gate_undeclared.RULE}


def test_every_rule_is_pinned_to_a_gate_pattern_or_exempted_once() -> None:
    rules = set(all_rules())
    assert not set(PINNED) & set(EXEMPT)
    assert rules - set(PINNED) - set(EXEMPT) == set(), "a new rule: pin it to a gate pattern or exempt it"
    assert set(PINNED) | set(EXEMPT) <= rules, "a row for a rule that no longer exists"


def test_every_pinned_gate_pattern_exists_and_every_gate_pattern_is_pinned() -> None:
    pinned = {name for names, _ in PINNED.values() for name in names}
    assert pinned <= _gate_names(), "a pinned gate pattern is missing from leak_gate._PATTERNS"
    assert _gate_names() - pinned - GATE_ONLY == set()


@pytest.mark.parametrize("rule", sorted(PINNED))
def test_the_rule_and_its_gate_pattern_read_the_same_sample(rule: str) -> None:
    names, sample = PINNED[rule]
    assert list(all_rules()[rule].spans(sample)), f"the {rule} rule does not find its sample"
    found = {f.reason for f in leak_gate.scan(sample)}
    assert found & names, f"the gate reads {rule}'s sample as {sorted(found)}, not {sorted(names)}"
