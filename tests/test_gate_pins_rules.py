"""The leak gate's pattern table, pinned against the redaction rules (issue 46 §4).

The gate (guards/gate/) reads with its own code by design, so a new token shape needs a place in both:
a rule in guards/rules/ and a pattern in the gate's `_PATTERNS`. Every rule is named here once, either
pinned to the gate patterns that read its shape (and a sample of the shape both must find) or exempted with
the reason the gate has none (none is, since issue 47 §2: token shapes have gate patterns of their own, and the
context rules are pinned to the gate's guess reading). A rule added without a row, or a gate pattern dropped,
fails here.
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
    "azure-key": (frozenset({"azure-account-key", "azure-client-secret"}),
                  f"DefaultEndpointsProtocol=https;AccountName=x;AccountKey={_BODY}Ab12Cd34==;EndpointSuffix=net"),
    "webhook-url": (frozenset({"webhook-token", "teams-webhook", "webhook-path-token"}),
                    f"https://discord.com/api/webhooks/1234567890123456789/{_BODY}"),
    "vendor-token": (frozenset({"vendor-token"}), f"glpat-{_BODY[:20]}"),
    "password-hash": (frozenset({"password-hash", "password-hash-family", "ldap-password-hash"}),
                      "admin:$apr1$Zq8uXy3P$9fD2mZxL4vB7nK1pR6wq0."),
    # The gate's own reading of the class (guards/gate/gate_undeclared.py: guess cost at a cued place), not
    # the detector's code. Context rules are pinned to it: it reads the place each rule reads.
    "undeclared-secret": (frozenset({gate_undeclared.RULE}), f"sshpass -p {_BODY} ssh host"),
    "prose-password": (frozenset({gate_undeclared.RULE}),
                       "For the NAS the passphrase, tangerine-orbit-5521, is on the card."),
    "shell-password": (frozenset({gate_undeclared.RULE}), "mysql -u root -pXk29fLq0pZ shop"),
    "expect-send": (frozenset({gate_undeclared.RULE}),
                    'spawn ssh admin@nas01\nexpect "Password:"\nsend "Pelican-Torch-6610\\r"\ninteract'),
    "table-credential": (frozenset({gate_undeclared.RULE}), "| nas01 | admin | Pelican-Torch-6610 |"),
    "yaml-block-secret": (frozenset({gate_undeclared.RULE}),
                          "db:\n  user: app\n  password: >-\n    Walnut-Harbor-7734\n"),
    "recovery-code": (frozenset({gate_undeclared.RULE}), "GitHub recovery codes:\n  7f3k-9qpz\n  2m8d-xv4r\n"),
}

# rule -> why the gate has no pattern of its own for it. A value muninn knows is still caught by the
# gate's known-value pass; these name what the gate's patterns alone would not read.
EXEMPT: dict[str, str] = {}

# Gate patterns that read a shape no single rule owns (a second reading of the labelled forms).
GATE_ONLY: frozenset[str] = frozenset()


def _gate_names() -> set[str]:
    return set(leak_gate._PATTERNS) | {gate_undeclared.RULE}


# More spellings of the token shapes pinned above (issue 47 §2): each one the rule reads, the gate reads.
MORE_SAMPLES: list[tuple[str, str]] = [
    ("password-hash", f"pbkdf2_sha256$870000${_BODY[:16]}${_BODY}="),
    ("webhook-url", f"https://chat.example.com/hooks/{_BODY[:17]}/{_BODY}"),
    ("azure-key", f"https://acct.blob.core.windows.net/c/f?sv=2022-11-02&se=2026-01-01&sig={_BODY[:30]}%3D"),
    ("azure-key", f"client secret abc8Q~{_BODY[:34]}"),
    ("webhook-url", "https://contoso.webhook.office.com/webhookb2/7f3a1c2e-aaaa-bbbb-cccc-0123456789ab@72f988bf/"
                    "IncomingWebhook/3f5e9b7c1d2a4e6f8a0b/9c4d"),
    ("webhook-url", "curl -X POST https://chat.example.com/hooks/xkq8f3ub7jn5pyx1e4wq9c2z6a"),
    ("webhook-url", f"https://chat.googleapis.com/v1/spaces/AAAAxyz/messages?key=AIzaSyDd&token={_BODY[:28]}"),
    ("vendor-token", f"export OPENAI_API_KEY=sk-proj-{_BODY}"),
    ("vendor-token", f"//registry.npmjs.org/:_authToken=npm_{_BODY[:36]}"),
    ("vendor-token", f"hf_{_BODY[:34]}"),
    ("vendor-token", f"pypi-{_BODY}{_BODY[:12]}"),
    ("vendor-token", f"VAULT_TOKEN=hvs.{_BODY[:24]}"),
    ("password-hash", "root:$6$rounds=5000$saltsalt$Xq7vR2mLp9zW4sQ8uXy3Pa55w0rd:19000:0:99999:7:::"),
    ("password-hash", "hash = $2b$12$KIXQJf3yqmW9R1e8lQ8v6u1mZxL4vB7nK1pR6wq0aBcDeFgHiJkLm"),
    ("password-hash", "$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$Zq8uXy3Pa55w0rdTok9f8Q2mZxL4vB7nK1pR6wq0"),
    ("password-hash", "userPassword: {SSHA}Zq8uXy3Pa55w0rdTok9f8Q2m"),
]


@pytest.mark.parametrize(("rule", "sample"), MORE_SAMPLES, ids=[f"{r}-{i}" for i, (r, _) in enumerate(MORE_SAMPLES)])
def test_more_spellings_of_a_pinned_shape_are_read_by_both(rule: str, sample: str) -> None:
    assert list(all_rules()[rule].spans(sample)), f"the {rule} rule does not find {sample!r}"
    assert {f.reason for f in leak_gate.scan(sample)} & (PINNED[rule][0] | {gate_undeclared.RULE}), sample


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
