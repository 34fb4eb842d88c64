"""The undeclared-secret detector (guards/undeclared/detect.py), by class, with no secrets file at all.

Cases are generated per class (evals/lab/undeclared_cases.py: 40 vendors x 7 layouts and AWS pairs; bare
tokens in 9 layouts x 5 lengths; 38 password labels in 30 spellings of many languages x 8 layouts and
user/password pairs in 6 layouts; 52 program options from their manuals in every spelling, env vars,
Ansible, .netrc, expect, Kubernetes Secrets, chpasswd). Negative tables: 17 kinds of identifiers
engineers search for, and prose that merely names credentials. The leak gate's own reading (a guess model at
cued places, guards/gate/gate_undeclared.py) backs the detector up: a miss in one is caught by the other, and
the gate never flags what the redactor left.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from planted import PROSE
from test_rules_round4 import CASES as ROUND4_CASES
from test_rules_round4 import CONTROLS as ROUND4_CONTROLS

from muninn.evals.lab.undeclared_cases import CLASSES, MANUAL_OPTIONS, cases, survivors
from muninn.guards.gate import gate_undeclared
from muninn.guards.gate.leak_gate import LeakGate
from muninn.guards.redact.allowlist import Allowlist
from muninn.guards.redact.redactor import Redactor
from muninn.guards.undeclared import credential_options
from muninn.guards.undeclared import detect as undeclared
from muninn.plugins.mcp.redaction import ValueRedactor

ROOT = Path(__file__).resolve().parents[1]
CASES = cases()
SURVIVORS = survivors()


@pytest.fixture(scope="module")
def export() -> Redactor:
    return Redactor.for_facts({})


def test_every_class_has_many_generated_cases() -> None:
    counts = Counter(cls for cls, _, _ in CASES)
    assert set(counts) == set(CLASSES)
    assert counts["vendor-pair"] >= 250 and counts["user-password"] >= 300
    assert counts["credential-option"] >= 180 and counts["bare-token"] >= 45
    assert len({k for k, _, _ in SURVIVORS}) >= 15 and len(SURVIVORS) >= 100


@pytest.mark.parametrize(("cls", "text", "secret"), CASES, ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(CASES)])
def test_an_undeclared_secret_is_redacted_at_export(export: Redactor, cls: str, text: str, secret: str) -> None:
    out = export.redact(text)
    assert secret not in out.text, (cls, text)
    assert export.redact(out.text).text == out.text, "redaction must be idempotent"


@pytest.mark.parametrize(("kind", "text", "ident"), SURVIVORS,
                         ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(SURVIVORS)])
def test_identifiers_survive(export: Redactor, kind: str, text: str, ident: str) -> None:
    assert ident in export.redact(text).text, (kind, text)
    assert not undeclared.find(text), (kind, text)


PLACEHOLDER_PROSE = [
    "Log in again when the session token times-out.",
    "After a bearer re-authentication the session is renewed.",
    "secret: $HOME/.config/gh/hosts.yml",
    "| shadow password | -rw-r----- | root | shadow |",
    "password: ********",
    "mysql -u root -p shop",                     # -p with a space prompts: `shop` is the database
    "ldapsearch -x -W -D cn=admin -b dc=example",  # -W prompts
    "sshpass -p \"$SSH_PASS\" ssh host",
    "curl -u \"$USER:$TOKEN\" https://api",
    "PGPASSWORD=${DB_PASS} psql",
    "openssl rsa -passin env:KEY_PASS -in k.pem",
    "openssl rsa -passin file:/run/secrets/pw -in k.pem",
    "smbclient //nas/x -U alice",
    "docker login -u ci --password-stdin ghcr.io",
    "ansible_become_pass={{ vault_become_pass }}",
    "The password policy requires 12 characters and a symbol.",
    "Passwort vergessen? Dann hilft das Admin-Team weiter.",
    "x86_64 / aarch64 builds are both published.",
    "TCP / IPv6 on port 443 / 8443",
    "See RFC 7617 for basic authentication and RFC 6750 for bearer tokens.",
    "| host | user | password |\n|---|---|---|\n| db1 | admin | (in the vault) |",
    "kind: Secret\ndata:\n  password: <base64 of the password>\n",
    "expect \"*assword*\"\nsend \"$env(PW)\\r\"",
    "machine example.com login bob password $NETRC_PW",
    "The API key id is shown as AKIAIOSFODNN7EXAMPLE in the console.",
    "Rotated the datadog key on Tuesday; see runbook/datadog-rotation.md.",
]


@pytest.mark.parametrize("text", PLACEHOLDER_PROSE)
def test_prose_and_placeholders_are_not_secrets(text: str) -> None:
    assert [text[f.start:f.end] for f in undeclared.find(text)] == [] or text.startswith("The API key id"), text


def test_a_key_id_alone_is_left_to_the_aws_rule() -> None:
    text = "The API key id is shown as AKIAIOSFODNN7EXAMPLE in the console."
    assert undeclared.find(text) == []


def test_pure_hex_needs_a_label_or_vendor_on_its_line_or_cell() -> None:
    sha = "3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
    assert undeclared.find(f"build {sha} passed") == []
    assert undeclared.find(f"| {sha} | deploy |") == []
    for text in (f"the datadog api key {sha}", f"| mailgun | {sha} |", f"api key: {sha}"):
        assert [text[f.start:f.end] for f in undeclared.find(text)] == [sha], text
    # A vendor in a file name is a file name: dpkg's md5sums hold `…/slack-symbolic.png`.
    assert undeclared.find(f"{sha}  usr/share/icons/slack-password-symbolic.png") == []


def test_the_table_holds_every_program_of_the_manual_list() -> None:
    for before, option, _, _, _ in MANUAL_OPTIONS:
        program = next(w for w in before.split() if w in credential_options.PROGRAMS)
        spellings = {s for spec in credential_options.PROGRAMS[program]
                     if isinstance(spec, credential_options.Option) for s in spec.spellings}
        assert option in spellings, (program, option)


@pytest.mark.parametrize(("cls", "text", "secret"), CASES, ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(CASES)])
def test_the_gate_never_flags_what_the_redactor_left(export: Redactor, cls: str, text: str, secret: str) -> None:
    """Two readings of one class, held in agreement: what the gate reads as a secret the detector
    (with the rest of the redactor) has already hidden, so an export drops nothing it redacted."""
    assert gate_undeclared.scan_lines(export.redact(text).text) == []


# Issue 47 §2: two readings of one class, independent in method (the detector's shape rules, the gate's guess
# cost at a cued place), so that a miss in one is caught by the other. Every generated case and every round-4
# shape is caught by at least one; each reader alone catches nearly all; what only the redactor reads is the
# vendor pairs the gate has no vendor list for (a hex or lower-case key beside a vendor's name and nothing else).
ROUND4 = [("round-4", text, secret) for text, secret in ROUND4_CASES.values()]
ONLY_THE_REDACTOR_MAY_READ = {"vendor-pair"}
MOST_ONLY_THE_REDACTOR_READS = 80      # a bound above the count in evals/results/security_round4.md


def _gate_reads(gate: LeakGate, text: str, secret: str) -> bool:
    """The gate flags a line that holds the secret (or the line it starts on)."""
    starts = {text.count("\n", 0, i) + 1 for i in range(len(text)) if text.startswith(secret, i)}
    return any(f.line in starts for f in gate.scan(text))


def tally(export: Redactor) -> dict[str, list[tuple[str, str]]]:
    """Cases by who catches them: the redactor (the secret is gone from what export writes) and the gate
    (it flags the secret's line in the text as written, before any redaction)."""
    gate = LeakGate({})
    out: dict[str, list[tuple[str, str]]] = {"both": [], "redactor only": [], "gate only": [], "neither": []}
    for cls, text, secret in CASES + ROUND4:
        redactor = secret not in export.redact(text).text
        flagged = _gate_reads(gate, text, secret)
        key = "both" if redactor and flagged else "redactor only" if redactor else "gate only" if flagged \
            else "neither"
        out[key].append((cls, text))
    return out


def test_a_miss_in_one_reading_is_caught_by_the_other(export: Redactor) -> None:
    counts = tally(export)
    assert counts["neither"] == []
    assert {cls for cls, _ in counts["redactor only"]} <= ONLY_THE_REDACTOR_MAY_READ, counts["redactor only"]
    assert len(counts["redactor only"]) <= MOST_ONLY_THE_REDACTOR_READS
    # And the gate's reading is its own: what it flags after redaction is nothing, on every case (above,
    # test_the_gate_never_flags_what_the_redactor_left), the round-4 shapes and the identifiers.
    gate = LeakGate({})
    for _, text, _ in ROUND4:
        assert gate.scan(export.redact(text).text) == [], text
    for _, text, _ in SURVIVORS:
        assert gate_undeclared.scan_lines(text) == [], text


# Notes that name credentials, options and logins around ordinary values: what the gate's cues point at
# here is a name, a version, a path, a placeholder, a file, a setting of the secret, not a secret.
CUED_ORDINARY = [
    "Reset the password with `passwd alice` and set PASS_MAX_DAYS 90 in /etc/login.defs",
    "token expiry: 3600s", "secret_name: db-creds-v2", "token_ttl: 24h30m", "password_encryption = scram-sha-256",
    "auth: oauth2-proxy-v7", "psk: see 1Password 'wifi-home-5g'", "password: 1Password/Infra/db-prod2",
    "| user | role |\n|---|---|\n| admin | sre-oncall-2 |", "| db1 | admin | PostgreSQL16 |",
    "| web01 | root | Ubuntu2204 |", "| host | user | os |\n|---|---|---|\n| db1 | postgres | RHEL9 |",
    "admin / Grafana8 dashboards", "login root / sda1", "alice / Team-Lead-2024", "x86_64 / arm64v8",
    "PIN 2 of the GPIO header", "pin: v1.2.3", "PSK mode: WPA2-Personal", "The token is 2FA-based since v2.",
    "the api key, Prod2024, was rotated", "Wi-Fi key: printed on router (model FRITZ7590)",
    "## Credentials\n\nk8s-prod-eu1\n", "Credentials for:\n- nas01.lan\n- router2\n- webserver01\n",
    "backup codes\n- codes2024.pdf\n", "GitHub recovery codes:\n  saved in Bitwarden2\n",
    "| name | token expiry |\n|---|---|\n| ci-bot | 2025-01-01 |",
    "docker run -p 8080:80 nginx", "mysql -uroot -p$MYSQL_PWD shop", "7z x -p archive2.7z",
    "openssl enc -pass pass:$KEY2 -in f", "curl --user alice:$PASS2 https://x", "--secret-name db-creds2",
    "password required pam_unix.so sha512 shadow nullok", "expect \"login:\"\nsend \"admin2\\r\"",
    "PSK mode: WPA2-Personal", "password policy for AD: 12 characters", "Token for CI: expires 2025-01-01",
    "The password for db2: see vault item DB2-prod",
    # Public names in one case, long and random to the eye: an age recipient, an onion address, an IPFS id.
    "recipient: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p",
    "http://duckduckgogg42xjoc72x3sjasowoarfbgcmvfimaftt6twagswzczad.onion/",
    "pinned bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi",
]
CONTROLS = [*ROUND4_CONTROLS, *PROSE, *PLACEHOLDER_PROSE, *CUED_ORDINARY]


@pytest.mark.parametrize("text", ["Passwort für das NAS: Garten7458+", "mot de passe de la box : Soleil4412#"])
def test_the_gate_reads_a_label_that_names_what_it_is_for(text: str) -> None:
    """`<word> for <thing>: <value>`: the label and its value apart; the gate reads it (a redactor miss when
    written, so the file is dropped rather than synced)."""
    assert [f.reason for f in LeakGate({}).scan(text)] == [gate_undeclared.RULE]
CONTROL_FILES = sorted([*(ROOT / "examples").rglob("*.md"), *(ROOT / "examples").glob("*.yaml"),
                        ROOT / "examples" / "observations.jsonl", ROOT / "README.md", *(ROOT / "docs").glob("*.md")])


@pytest.mark.parametrize("text", CONTROLS)
def test_the_gate_drops_no_ordinary_note(export: Redactor, text: str) -> None:
    assert LeakGate({}).scan(export.redact(text).text) == [], text


@pytest.mark.parametrize("path", CONTROL_FILES, ids=[str(p.relative_to(ROOT)) for p in CONTROL_FILES])
def test_the_gate_drops_no_file_of_the_repo(export: Redactor, path: Path) -> None:
    """The sample notes, the README and the docs: one false drop refuses a whole sync."""
    found = LeakGate({}).scan(export.redact(path.read_text()).text)
    assert [(f.reason, f.line) for f in found] == []


def test_the_gate_reports_undeclared_secrets_by_line() -> None:
    text = "# Router\nnothing here\nWLAN-Schlüssel: Sommer2024!Haus\n"
    assert [(f.reason, f.line) for f in LeakGate({}).scan(text)] == [("undeclared-secret", 3)]


def test_a_hit_is_a_pattern_hit_with_a_fingerprint_and_can_be_allowed(tmp_path) -> None:
    allowlist = Allowlist.load(tmp_path / "allow.json").keyed()
    text = "admin / Xk29!fLq0p"
    hits = [h for h in Redactor.for_facts({}, allowlist).redact(text).hits if h.rule == undeclared.RULE]
    assert [(h.kind, text[h.start:h.end]) for h in hits] == [("pattern", "Xk29!fLq0p")]
    fp = allowlist.fingerprint(undeclared.RULE, "Xk29!fLq0p")
    assert fp is not None and "Xk29" not in fp
    assert allowlist.refusal(fp, [undeclared.RULE], {}) is None
    allowlist.add(fp)
    assert Redactor.for_facts({}, allowlist).redact(text).text == text
    assert LeakGate({}, allow=allowlist.allows_text).scan(text) == []


def test_the_mcp_scrubber_decides_on_the_whole_file(tmp_path) -> None:
    """A file no export wrote: the key id sits one line above the secret, so a snippet of the
    second line alone has no key id; the whole-file scrub still hides the secret."""
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz9k2LmQ"
    text = f"# AWS\nAKIAIOSFODNN7ABCDEFG\n{secret}\n" + "filler line\n" * 200
    scrubbed = ValueRedactor({}, Allowlist.load(tmp_path / "a.json")).scrub_file(text)
    assert secret not in scrubbed and "[REDACTED:undeclared-secret]" in scrubbed


def test_a_piece_of_a_file_is_hidden_as_the_file_decides() -> None:
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz9k2LmQ"
    whole = f"# AWS\nAKIAIOSFODNN7ABCDEFG\n{secret}\nrotate yearly\n"
    assert undeclared.hide_found(f"… {secret} rotate yearly", whole) == "… [REDACTED:undeclared-secret] rotate yearly"
    assert undeclared.hide_found("rotate yearly", whole) == "rotate yearly"
