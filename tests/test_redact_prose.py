"""Pattern redaction leaves ordinary prose and paths alone (the class found on real manuals: `basic
Unix-like`, `Basic Setup/part-1`, `token expired.`, `credentials=/root/.smbcred`) and still hides every
credential shape after the same trigger words. Both tables go through the export redactor as export
builds it (every form, views, cut prefixes, all rules), and the prose through the leak gate and a real
export too: a line the redactor leaves but the gate flags would drop the whole fact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from muninn.guards.gate.leak_gate import LeakGate
from muninn.guards.redact.redactor import ENCODINGS, Redactor
from muninn.guards.rules import all_rules, names_a_file, ordinary_words

# How sysadmin docs and runbooks write around `basic`, `bearer`, `token`, `digest` and secret labels.
PROSE = {
    "chapter heading": "## The basic Unix-like work environment",
    "heading in a fact id": "postgresql/ssl-tcp.md#Basic Setup/part-1",
    "second part of a heading": "postgresql/runtime-config.md#Basic Configuration/part-2",
    "digest auth sentence": "The proxy uses Digest authentication-based login for the admin pages.",
    "bearer compound": "Bearer well-known-tokens are described in RFC 6750.",
    "architecture triplet": "Install a basic x86_64-linux-gnu system before adding the chroot.",
    "sentence ends in a period": "This server only supports basic authentication.",
    "runbook cause": "2. Most common cause: the DNS provider token expired. Rotate it in the console.",
    "hyphen then period": "Log in again when the session token times-out.",
    "two architectures": "Keep a basic i386/amd64 multiarch setup for the old agents.",
    "acronym and version": "The lab network is basic IPv6-only networking since 2024.",
    "checksum algorithm": "Releases are signed with a digest sha256-based manifest.",
    "protocol version": "See the Basic HTTP/2-support notes in the nginx chapter.",
    "camel-case product": "Start from the Basic PostgreSQL-setup section of the manual.",
    "platform name": "The installer ships a basic macOS-compatible layout.",
    "file name": "Apply the basic k8s-cluster.yaml example, then the overlay.",
    "version word": "The API accepts token v2.0-compatible requests only.",
    "rfc reference": "Digest access-authentication is specified in RFC 7616.",
    "re- prefix": "After a bearer re-authentication the session is renewed.",
    "dotted service": "Check the basic systemd-resolved.service status first.",
    # A label followed by a path: where the secret lives, not the secret.
    "cifs credentials file": "mount -t cifs //nas/share /mnt -o credentials=/root/.smbcred,uid=1000",
    "tls key path": "private key: /etc/ssl/private/host.key",
    "docker secret file": "db_password: /run/secrets/db_password",
    "home dot file": "credentials: ~/.pgpass",
    "ssh key under home": "deploy key: ~/.ssh/id_ed25519",
    "relative key file": "client key: ./certs/client-key.pem",
    "variable home": "secret: $HOME/.config/gh/hosts.yml",
    "letsencrypt": "TLS private key: /etc/letsencrypt/live/example.com/privkey.pem",
    "path at sentence end": "The encryption key: /etc/luks/keys/data.key.",
    "parent directory": "api token: ../secrets/api-token.txt",
    "vault agent sink": "vault token: /run/vault-agent/token-sink",
    "key file with a version": "private key: ~/.ssh/id_ed25519",
    "token file with a version": "api token: /run/secrets/api-token-v2",
    # `ls -l` modes in a table of account files (the Debian Reference's chapter 4).
    "passwd mode in a table": "| `/etc/passwd` | `-rw-r--r--` | `root` | `root` | user account information |",
    "shadow mode in a table": "| shadow password | -rw-r----- | root | shadow |",
    "key file mode": "The private key | -rw------- | is readable by root only.",
}

# Real credential shapes after the same trigger words; `rule` is the muninn rule that must still
# flag the value itself (other rules may flag it too).
CREDENTIALS = {
    "base64 basic creds": ("curl with basic dXNlcjpwYXNz then retry", "dXNlcjpwYXNz", "auth-header"),
    "base64 basic padded": ("Basic YWRtaW46aHVudGVyMg==", "YWRtaW46aHVudGVyMg==", "auth-header"),
    "jwt": ("bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFU",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFU", "auth-header"),
    "mixed case and digits": ("token abc123XYZ", "abc123XYZ", "auth-header"),
    "hex": ("bearer 8f14e45fceea167a5a36dedd4bea2543", "8f14e45fceea167a5a36dedd4bea2543", "auth-header"),
    "short hex": ("the token 8f14e45fceea.", "8f14e45fceea", "auth-header"),
    "uuid": ("token 550e8400-e29b-41d4-a716-446655440000", "550e8400-e29b-41d4-a716-446655440000", "auth-header"),
    "github": ("token ghp_R8x2Lq9Zt4Vw7Yp1Bn6Mk3Hs5Jd0Fc2Gx8Qa", "ghp_R8x2Lq9Zt4Vw7Yp1Bn6Mk3Hs5Jd0Fc2Gx8Qa",
               "auth-header"),
    "slack": ("bearer xoxb-123456789012-123456789012-AbCdEfGhIjKlMnOpQrStUvWx",
              "xoxb-123456789012-123456789012-AbCdEfGhIjKlMnOpQrStUvWx", "auth-header"),
    "long digit run": ("token 4821937465-wordy-looking", "4821937465-wordy-looking", "auth-header"),
    "fixture token": ("token testab12cd34", "testab12cd34", "auth-header"),
    "openai shape": ("Bearer sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vX7", "sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vX7", "auth-header"),
    "gitlab": ("token glpat-x8Yz2AbC4dEf6GhI8jKl", "glpat-x8Yz2AbC4dEf6GhI8jKl", "auth-header"),
    "google oauth": ("bearer ya29.a0AfH6SMBx1y2z3AbCdEfGhIjKlMnOp", "ya29.a0AfH6SMBx1y2z3AbCdEfGhIjKlMnOp",
                     "auth-header"),
    "vault token": ("token s.Xk29fLq0Zr7TnB4wPs8v", "s.Xk29fLq0Zr7TnB4wPs8v", "auth-header"),
    "base64 of words": ("basic QmFzaWNBdXRoOnNlY3JldA", "QmFzaWNBdXRoOnNlY3JldA", "auth-header"),
    # A header line keeps today's behaviour: words are redacted there too.
    "header with words": ("Authorization: Bearer well-known-tokens", "well-known-tokens", "auth-header"),
    "curl header": ("curl -H 'Authorization: Basic Unix-like-creds'", "Unix-like-creds", "auth-header"),
    # Labelled values: hyphen-joined words stay a secret (a diceware passphrase), paths only when ordinary.
    "diceware password": ("password: correct-horse-battery-staple", "correct-horse-battery-staple",
                          "labelled-secret"),
    "diceware with dots": ("passphrase: velvet.otter.lantern.quiver", "velvet.otter.lantern.quiver",
                           "labelled-secret"),
    "random piece at root": ("password: /Zx9q2LmW8", "/Zx9q2LmW8", "labelled-secret"),
    "one segment after slash": ("password: /Summer2024", "/Summer2024", "labelled-secret"),
    "random piece in a path": ("credentials=/root/Zx9q2LmW8/smb", "/root/Zx9q2LmW8/smb", "labelled-secret"),
    "random file under home": ("private key: ~/.ssh/Qw3rtY8uI0pAs", "~/.ssh/Qw3rtY8uI0pAs", "labelled-secret"),
    "random relative": ("API token: ./Xk29fLq0Zr7TnB4wPs8v", "./Xk29fLq0Zr7TnB4wPs8v", "labelled-secret"),
    "digits inside": ("DB_PASSWORD=Winter2025Rotation", "Winter2025Rotation", "labelled-secret"),
    "symbol password": ("password: Tr0ub4dor&3", "Tr0ub4dor&3", "labelled-secret"),
    "hyphen and random": ("api key: hunter2-Zq7Xv2Lm", "hunter2-Zq7Xv2Lm", "labelled-secret"),
}


@pytest.fixture(scope="module")
def export_redactor() -> Redactor:
    return Redactor({}, patterns=True, encodings=ENCODINGS, views=True)


@pytest.mark.parametrize("case", list(PROSE))
def test_prose_and_paths_come_out_untouched(export_redactor: Redactor, case: str) -> None:
    text = PROSE[case]
    out = export_redactor.redact(text)
    assert out.text == text and out.hits == [], out.text


@pytest.mark.parametrize("case", list(PROSE))
def test_the_leak_gate_agrees_the_prose_is_not_a_secret(case: str) -> None:
    assert LeakGate({}).scan(PROSE[case]) == []


def test_an_export_of_the_prose_writes_every_line_and_drops_nothing(run_muninn, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    for i, text in enumerate(PROSE.values()):
        (notes / f"n{i}.md").write_text(f"# Note {i}\n\n{text}\n")
    ended = run_muninn(["export", "notes", str(notes), "--out", str(tmp_path / "out"), "--json"])
    report = json.loads(ended.stdout)
    assert ended.exit_code == 0 and report["dropped"] == [] and report["redactions"] == [], ended.stdout
    for i, text in enumerate(PROSE.values()):
        assert text in (tmp_path / "out" / f"n{i}.md").read_text()


@pytest.mark.parametrize("case", list(CREDENTIALS))
def test_credentials_after_the_same_words_are_redacted(export_redactor: Redactor, case: str) -> None:
    text, value, rule = CREDENTIALS[case]
    out = export_redactor.redact(text)
    assert value not in out.text and "[REDACTED:" in out.text, out.text
    # The muninn rule itself still flags the value, not only some other detector.
    spans = list(all_rules()[rule].spans(text))
    assert any(s <= text.index(value) and text.index(value) + len(value) <= e for s, e in spans), spans


@pytest.mark.parametrize(("value", "ordinary"), [
    ("Unix-like", True), ("Setup/part-1", True), ("x86_64-linux-gnu", True), ("expired.", True),
    ("authentication-based", True), ("HTTP/2-support", True), ("PostgreSQL-setup", True), ("IPv6-only", True),
    ("sha256-based", True), ("k8s-cluster.yaml", True), ("i18n", True), ("2024-01-15", True),
    ("dXNlcjpwYXNz", False), ("abc123XYZ", False), ("8f14e45fceea", False), ("QmFzaWNBdXRo", False),
    ("ghp_R8x2Lq9Zt4Vw7Yp1Bn6Mk3Hs5Jd0Fc2Gx8Qa", False), ("xoxb-123456789012-abc", False),
    ("550e8400-e29b-41d4-a716-446655440000", False), ("Tr0ub4dor", False), ("", False), ("---", False),
])
def test_ordinary_words(value: str, ordinary: bool) -> None:
    assert ordinary_words(value) is ordinary


@pytest.mark.parametrize(("value", "is_path"), [
    ("/root/.smbcred", True), ("~/.pgpass", True), ("./certs/client-key.pem", True), ("$HOME/.netrc", True),
    ("${XDG_CONFIG_HOME}/gh/hosts.yml", True), ("../keys/deploy_ed25519", True),
    ("/Summer2024", False), ("/Zx9q2LmW8", False), ("/root/Zx9q2LmW8", False), ("correct-horse-battery", False),
    ("~/.ssh/Qw3rtY8uI0pAs", False), ("/", False), ("~/", False),
])
def test_names_a_file(value: str, is_path: bool) -> None:
    assert names_a_file(value) is is_path


# Pieces of every kind `ordinary_words` accepts and of kinds it refuses, joined in pairs: whatever
# the redactor leaves as prose the gate must not flag, or the export drops the fact instead.
PIECES = ["like", "Setup", "HTTP", "macOS", "GitHub", "PostgreSQL", "2024", "64", "x86", "IPv6", "TLSv1", "k8s",
          "i18n", "ed25519", "2fa", "10GB", "dXNlcjpw", "abc123XYZ", "Xk29fLq0", "AbCdEfGh", "123456789012"]


ORDINARY_PAIRS = [v for a in PIECES for b in PIECES for sep in "-./_" if ordinary_words(v := f"{a}{sep}{b}")]


def test_the_gate_is_at_least_as_lenient_as_the_redactor_on_bare_words() -> None:
    assert 500 < len(ORDINARY_PAIRS) < len(PIECES) ** 2 * 4, "the pairs hold both kinds"
    gate = LeakGate({})
    assert [v for v in ORDINARY_PAIRS if gate.scan(f"basic {v} here")] == []
