"""Issue 47 §2, secrets nobody declared, round 4: each class in several spellings is gone from what export
writes (`Redactor.for_facts({})`: nothing declared), and the same shapes in ordinary text stay. The
Debian manuals' count (0 hits of these rules on 1.4 M characters) is evals/results/security_rules_round4.md."""

from __future__ import annotations

import pytest

from muninn.guards.redact.redactor import Redactor

SECRET = "Pelican-Torch-6610"
CASES = {   # name: (text, the secret in it)
    "passphrase after a comma": ("For the NAS the passphrase, tangerine-orbit-5521, is on the card.",
                                 "tangerine-orbit-5521"),
    "password after a comma, no article": ("VPN password, Kx7-vault-Lm2, rotate in May.", "Kx7-vault-Lm2"),
    "recovery codes, indented": ("GitHub recovery codes:\n  7f3k-9qpz\n  2m8d-xv4r\n", "2m8d-xv4r"),
    "backup codes, bulleted digits": ("Backup codes for admin:\n- 84620193\n- 11937462\n", "11937462"),
    "2FA scratch codes in a table": ("2FA scratch codes\n| n | code |\n|---|---|\n| 1 | 9k2m-4p7x |\n", "9k2m-4p7x"),
    "htpasswd apr1": ("admin:$apr1$Zq8uXy3P$9fD2mZxL4vB7nK1pR6wq0.", "9fD2mZxL4vB7nK1pR6wq0"),
    "shadow sha512": ("root:$6$rounds=5000$saltsalt$Xq7vR2mLp9zW4sQ8uXy3Pa55w0rd:19000:0:99999:7:::",
                      "Xq7vR2mLp9zW4sQ8uXy3Pa55w0rd"),
    "bcrypt": ("hash = $2b$12$KIXQJf3yqmW9R1e8lQ8v6u1mZxL4vB7nK1pR6wq0aBcDeFgHiJkLm", "KIXQJf3yqmW9R1e8lQ8v6u"),
    "argon2 PHC": ("$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$Zq8uXy3Pa55w0rdTok9f8Q2mZxL4vB7nK1pR6wq0",
                   "Zq8uXy3Pa55w0rdTok9f8Q2m"),
    "LDAP SSHA": ("userPassword: {SSHA}Zq8uXy3Pa55w0rdTok9f8Q2m", "Zq8uXy3Pa55w0rdTok9f8Q2m"),
    "Discord webhook": ("https://discord.com/api/webhooks/1234567890123456789/Zq8uXy3Pa55w0rdTok9f8Q2mZxL4vB7nK1pR6",
                        "Zq8uXy3Pa55w0rdTok9f8Q2mZxL4vB7nK1pR6"),
    "Teams webhook": ("https://contoso.webhook.office.com/webhookb2/7f3a1c2e-aaaa-bbbb-cccc-0123456789ab@72f988bf/"
                      "IncomingWebhook/3f5e9b7c1d2a4e6f8a0b/9c4d", "3f5e9b7c1d2a4e6f8a0b"),
    "Google Chat token": ("https://chat.googleapis.com/v1/spaces/AAAAxyz/messages?token=Zq8uXy3Pa55w0rdTok9f8Q2mZxL4",
                          "Zq8uXy3Pa55w0rdTok9f8Q2mZxL4"),
    "Mattermost hook": ("curl -X POST https://chat.example.com/hooks/xkq8f3ub7jn5pyx1e4wq9c2z6a",
                        "xkq8f3ub7jn5pyx1e4wq9c2z6a"),
    "YAML folded": (f"db:\n  user: app\n  password: >-\n    {SECRET}\n", SECRET),
    "YAML literal": (f"api_token: |\n  {SECRET}x9\n", f"{SECRET}x9"),
    "unlabelled table row": (f"| nas01 | admin | {SECRET} |", SECRET),
    "table row with an e-mail": (f"| grafana | ops@example.com | {SECRET} |", SECRET),
    "expect send": (f'spawn ssh admin@nas01\nexpect "Password:"\nsend "{SECRET}\\r"\ninteract', SECRET),
    "expect -re then send": (f'expect -re "(?i)passphrase"\nsend -- "{SECRET}\\n"', SECRET),
    # Windows line endings (the second reviewer's cases)
    "YAML folded, CRLF": ("db:\r\n  password: >-\r\n    Walnut-Harbor-7734\r\n", "Walnut-Harbor-7734"),
    "table row, CRLF": ("| jsmith | admin | Orbit-Lemon-77x |\r\n", "Orbit-Lemon-77x"),
    "recovery codes, CRLF": ("GitHub recovery codes:\r\n  4f2a1-9c8b7\r\n  0d3e6-b5a48\r\n", "0d3e6-b5a48"),
    "pexpect sendline": (f'child.expect("assword:")\nchild.sendline("{SECRET}")', SECRET),
}
CONTROLS = [
    "The recovery codes are stored in the safe; regenerate them after use.",
    "Backup codes:\nsee the printed sheet in the safe\n",
    "| web01 | admin | nginx-1.25.3 | Ubuntu 24.04 |",
    "| host | owner | role |\n|---|---|---|\n| db01 | root | PostgreSQL16 primary |",
    "Git hooks live in .git/hooks/post-receive and /hooks/pre-commit-config-example.",
    'expect "Password:"\nsend "$env(PASS)\\r"',
    'expect "login:"\nsend "admin\\r"',
    "password: |\n  rotated yearly, see vault\n",
    "The password, as always, is in the vault.",
    "Costs $5$ per month or $6$ yearly.",
    "GET /search?key=value&sort=asc&page=2",
    "VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZy4gSXQgd2FzIGEgc3VubnkgZGF5Lg==",
    "SGVsbG8sIHRoaXMgaXMgYSBwbGFpbiBFbmdsaXNoIHNlbnRlbmNlIGZvciB0aGUgcnVuYm9vay4=",
]


@pytest.fixture(scope="module")
def export() -> Redactor:
    return Redactor.for_facts({})


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_undeclared_shape_is_gone_from_what_export_writes(export: Redactor, name: str) -> None:
    text, secret = CASES[name]
    out = export.redact(text).text
    assert secret not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize("text", CONTROLS)
def test_the_same_shapes_in_ordinary_text_stay(export: Redactor, text: str) -> None:
    assert export.redact(text).text == text
