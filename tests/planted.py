"""Planted secrets: random values embedded in the forms real notes, configs and logs use.

    secrets = generate(n=320, seed=7)            # distinct values, ≥ 12 forms, round-robin
    known = known_values(secrets)                 # value -> secret id
    write_secrets_yaml(secrets, tmp / "s.yaml")   # the same values as a secrets YAML file

Reusable by any test that needs to prove a secret does not come out the other end (export,
sync, MCP outputs, masking). Values are random per seed, so a test cannot pass by memorising
them; every value is secret-ish (`guards.secret_values.is_secretish`) by construction.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

ALNUM = string.ascii_letters + string.digits
SYMBOLS = "!#%&*+-.=?@^_~"


@dataclass(frozen=True)
class Planted:
    secret_id: str
    value: str
    form: str
    filename: str   # a plausible file name for `doc` (the extension matters to some scanners)
    doc: str        # a small document holding the value in this form

    @property
    def needles(self) -> list[str]:
        """What must not survive: the value, and for multi-line values each long line of it."""
        lines = [ln.strip() for ln in self.value.splitlines() if len(ln.strip()) >= 16 and "-----" not in ln]
        return [self.value, *lines]


def _token(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    while True:
        v = "".join(rng.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in v) and any(c.isalpha() for c in v):
            return v


def _password(rng: random.Random) -> str:
    core = _token(rng, rng.randint(10, 18))
    cut = rng.randrange(len(core))
    return core[:cut] + rng.choice(SYMBOLS) + core[cut:]


def _pem(rng: random.Random) -> str:
    body = [base64.b64encode(rng.randbytes(48)).decode() for _ in range(rng.randint(4, 8))]
    kind = rng.choice(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"])
    return "\n".join([f"-----BEGIN {kind}-----", *body, f"-----END {kind}-----"])


def _jwt(rng: random.Random) -> str:
    def part(obj: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    head = part({"alg": "HS256", "typ": "JWT"})
    body = part({"sub": _token(rng, 12), "iat": rng.randint(1_600_000_000, 1_800_000_000)})
    return f"{head}.{body}.{_token(rng, 43, ALNUM + '-_')}"


def _value(rng: random.Random, form: str) -> str:
    if form == "pem":
        return _pem(rng)
    if form == "jwt":
        return _jwt(rng)
    style = rng.randrange(6)
    if style == 0:
        return "ghp_" + _token(rng, 36)
    if style == 1:
        return f"xoxb-{rng.randint(10**11, 10**12)}-{_token(rng, 24)}"
    if style == 2:
        return "AKIA" + _token(rng, 16, string.ascii_uppercase + string.digits)
    if style == 3:
        return "sk_live_" + _token(rng, 24)
    if style == 4:
        return _password(rng)
    return _token(rng, rng.randint(16, 40))


def _sid(rng: random.Random, i: int) -> str:
    service = rng.choice(["jira", "grafana", "github", "slack", "postgres", "vault", "minio", "argo", "sentry"])
    return f"{service}-{rng.choice(['prod', 'staging', 'dev'])}-{i:03d}"


# form -> document builder (secret id, value) -> (file name, text)
Builder = Callable[[str, str], tuple[str, str]]

FORMS: dict[str, Builder] = {
    "labelled": lambda sid, v: ("note.md", f"# {sid}\n\nRotated last spring.\n\ntoken: {v}\n\nAsk ops first.\n"),
    "table-bare": lambda sid, v: (
        "infra.md", f"| service | owner | value |\n|---|---|---|\n| {sid} | platform | {v} |\n| web | team | n/a |\n"),
    "api-key-space": lambda sid, v: ("old.md", f"Old integration notes.\nAPI key: {v}\nDo not reuse.\n"),
    "url": lambda sid, v: ("dsn.md", f"Connect with `psql postgres://app_rw:{v}@db-01.internal:5432/app`.\n"),
    "yaml": lambda sid, v: ("values.yaml", f"service:\n  name: {sid}\n  password: {v}\n  replicas: 2\n"),
    "json": lambda sid, v: ("config.json", json.dumps({"service": sid, "client_secret": v, "retries": 3}, indent=2)),
    "ini": lambda sid, v: ("settings.ini", f"[database]\nhost = db-01.internal\npassword = {v}\nport = 5432\n"),
    "env": lambda sid, v: (".env", f"APP_ENV=production\n{sid.split('-')[0].upper()}_TOKEN={v}\nLOG_LEVEL=info\n"),
    "code-block": lambda sid, v: (
        "client.md", f"Example:\n\n```python\nclient = Client(api_key=\"{v}\")\nclient.ping()\n```\n"),
    "shell-export": lambda sid, v: (".bash_history", f"cd ~/src/app\nexport SERVICE_TOKEN={v}\nmake deploy\n"),
    "shell-curl": lambda sid, v: (
        ".zsh_history", f"curl -s -H \"Authorization: Bearer {v}\" https://{sid}.example.com/api/me\n"),
    "jsonl-output": lambda sid, v: ("observations.jsonl", json.dumps(
        {"ts": "2025-03-02T10:00:00Z", "tool": "bash", "input": "cat creds.txt", "output": f"{sid}\n{v}\n"}) + "\n"),
    "repo-config": lambda sid, v: (
        "docker-compose.yml", f"services:\n  app:\n    environment:\n      - SECRET_KEY={v}\n      - DEBUG=0\n"),
    "prose-bare": lambda sid, v: ("standup.md", f"Yesterday I used {v} to get into the box, will rotate.\n"),
    "pem": lambda sid, v: ("deploy.md", f"Deploy key for {sid}:\n\n```\n{v}\n```\n"),
    "jwt": lambda sid, v: ("debug.md", f"The session cookie was {v} when it failed.\n"),
}

# Forms that only the value pass can catch: no label, prefix or shape gives the value away.
VALUE_ONLY_FORMS = {"table-bare", "jsonl-output", "prose-bare"}


def generate(n: int = 320, seed: int = 1) -> list[Planted]:
    """`n` distinct secrets spread round-robin over every form."""
    rng = random.Random(seed)
    out: list[Planted] = []
    seen: set[str] = set()
    forms = list(FORMS)
    i = 0
    while len(out) < n:
        form = forms[i % len(forms)]
        value = _value(rng, form)
        # A labelled form with a prefixed value would be caught by the prefix alone; a bare value in a
        # bare form must be a plain random string, or the value-only forms prove nothing.
        if form in VALUE_ONLY_FORMS:
            value = _token(rng, rng.randint(16, 40))
        if value in seen:
            continue
        seen.add(value)
        sid = _sid(rng, i)
        filename, doc = FORMS[form](sid, value)
        out.append(Planted(sid, value, form, filename, doc))
        i += 1
    return out


def known_values(planted: list[Planted]) -> dict[str, str]:
    return {p.value: p.secret_id for p in planted}


def write_secrets_yaml(planted: list[Planted], path: Path) -> Path:
    entries = [{"id": p.secret_id, "service": p.secret_id.split("-")[0], "kind": "token", "value": p.value}
               for p in planted]
    path.write_text(yaml.safe_dump(entries, sort_keys=False), encoding="utf-8")
    return path


def write_docs(planted: list[Planted], root: Path) -> list[Path]:
    """Each document in its own folder (names repeat across forms)."""
    paths = []
    for i, p in enumerate(planted):
        target = root / f"{i:04d}-{p.form}" / p.filename
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(p.doc, encoding="utf-8")
        paths.append(target)
    return paths


# Ordinary notes that must come out of redaction and the gate byte for byte. Decisions recorded
# here: host names, IPs, versions, ticket keys, UUIDs, dates, paths, e-mail addresses, unquoted
# commit hashes, `$VARS` and `<placeholders>` are not secrets, nor are words like password/token
# used in prose. (A *quoted* hex string of ≥ 8 characters is redacted by detect-secrets' hex
# entropy plugin, commit hashes in JSON included; that is accepted and not in this corpus.)
SHORT_HINTS = ["bluefish", "tuesday", "kestrel", "orange", "staging", "summer"]

PROSE = [
    "The usual hint is bluefish; ask in #ops if you forgot which one.",
    "Deployed version 2.14.3 to web-01.prod.example.com at 10:42 UTC, rollback plan in INC-10963.",
    "Ticket OPS-2291 tracks the move of 10.0.12.7 and 192.168.1.20 behind the new load balancer.",
    "Request 550e8400-e29b-41d4-a716-446655440000 failed with a 403 because the VPN was down.",
    "commit 3f2a9c1d4e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9c fixed the retry loop in payments.",
    "Run `kubectl --context ops-cluster get pods -n payments` before touching the deployment.",
    "The password is in the vault: use muninn secret exec jira-api-token -- curl ... with $JIRA_API_TOKEN.",
    "Tokens expire after 24 hours; the refresh token is rotated by the integration, never by hand.",
    "Set the API key in the environment as <your key>, never in the repo.",
    "export KUBECONFIG=~/.kube/config-ops",
    "password: see vault entry vm-sudo",
    "Primary key: id, secondary key: created_at",
    "Email alice.smith@example.com about the /var/lib/postgresql/16/main disk on db-02.internal.",
    "On 2025-03-02 we upgraded from python3.11 to python3.12 and node 20.11.1.",
    "The basic plan costs less; bearer of bad news: the build is red again.",
    "Secret rotation happens every Tuesday, and the token: expires daily.",
    "Docker image registry.example.com/team/api:v1.8.0 is pinned in deploy/values.yaml.",
    "ssh -J bastion.example.com admin@10.0.3.4 hostname",
    "Use `aws sts get-caller-identity --profile prod-readonly` to check the SSO session.",
    "S3 bucket s3://backups-eu-west-1/daily/ keeps 30 days.",
    "Grafana dashboard at https://grafana.example.com/d/abc123/latency?orgId=1 shows the spike.",
    "The kestrel and orange hints are for the test VMs only; summer is the staging Wi-Fi.",
    "| host | role | note |\n|---|---|---|\n| web-01 | frontend | nginx 1.25 |\n| db-02 | postgres | 16.2 |",
    "Error: connection refused (os error 111) at src/db/pool.rs:88:17",
    "We store a sha256 of each secret, never the value, in the audit log.",
]
