"""Measure known values from where secrets live (issue #31 §4): what the Kubernetes Secrets reader and
the `.env` reader keep, and what their values cost on ordinary text.

Run: `.venv/bin/python -m muninn.evals.lab.bench_known_values [--debs DIR]`. Writes its section,
"Known values from where secrets live", into evals/results/security_undeclared.md (replacing the
section if it is there; bench_undeclared rewrites the rest of that file).

- Cases: Secrets of every type a cluster holds (Opaque settings, a config file, a cloud key file,
  kubernetes.io/tls, dockerconfigjson, service-account-token) and `.env` files, generated per class.
  *Kept*: the secret value is a known value and is gone from what export writes of a line naming it.
  *Left*: a public or identifying value of the same object (host, user name, namespace, port, CA and
  TLS certificate lines, registry host, database name, project id) is not a known value and survives.
- Ordinary text: the three Debian manuals of the harness and the prose set (bench_undeclared's own
  loaders). Every value-pass redaction there with these known values is a false redaction; the
  baseline is the same text with no known values, so the difference is what the new source costs.
- The filter alone on config-shaped text: that text read as if each file were a config file held in
  a Secret (`config_secrets.config_values`, filtered by key): the `key: value` / `key=value` lines
  it reads, and how many values it would make known.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import json
import random
import shutil
import string
import tempfile
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from muninn.evals.lab.bench_security_export import PROSE_FILES
from muninn.evals.lab.bench_undeclared import fetch_debs, manual_texts
from muninn.guards.known import secret_values
from muninn.guards.known.config_secrets import config_values
from muninn.guards.known.setting_values import setting_values
from muninn.guards.redact.redactor import Redactor
from muninn.plugins.access import kube_secrets

RESULTS = Path(__file__).resolve().parents[2] / "evals" / "results" / "security_undeclared.md"
PER_CLASS = 40
HEADING = "## Known values from where secrets live (issue #31 §4)"


def _rand(rng: random.Random, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def pem_pair(common_name: str = "svc.example.com") -> tuple[str, str]:
    """A fresh self-signed certificate and its private key, both PEM (tests/test_kube_values.py too)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + dt.timedelta(days=30)).sign(key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM).decode(),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()).decode())


def _secret(ns: str, name: str, kind: str, data: dict[str, str]) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "type": kind, "metadata": {"name": name, "namespace": ns},
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}


def cases(rng: random.Random) -> dict[str, tuple[list[dict], list[str], list[str]]]:
    """{class: (Secret objects or env texts, secret values, public values)}."""
    out: dict[str, tuple[list, list[str], list[str]]] = {}
    objs, secret, public = [], [], []
    for i in range(PER_CLASS):
        host, user, pw = f"db{i:02d}.prod.example.com", f"svc-app-{2000 + i}", _rand(rng, 18) + "#1"
        ns = f"team-{i:02d}"
        objs.append(_secret(ns, "db", "Opaque", {"host": host, "username": user, "password": pw, "port": "5432",
                                                   "database": f"orders_{i}", "api-token": "tok_" + _rand(rng, 24)}))
        secret += [pw]
        public += [host, user, ns, f"orders_{i}"]
    out["opaque settings"] = (objs, secret, public)
    objs, secret, public = [], [], []
    for i in range(PER_CLASS):
        pw, host = _rand(rng, 20), f"redis{i}.internal.example.com"
        objs.append(_secret("web", f"app-config-{i}", "Opaque", {
            "app.yaml": f"redis:\n  host: {host}\n  user: cache-{1000 + i}\n  password: {pw}\nlog_level: info\n"}))
        secret.append(pw)
        public += [host, f"cache-{1000 + i}"]
    out["config file in a Secret"] = (objs, secret, public)
    objs, secret, public = [], [], []
    for i in range(PER_CLASS // 4):
        _, key = pem_pair()
        project = f"billing-prod-{100000 + i}"
        doc = {"type": "service_account", "project_id": project, "private_key_id": _rand(rng, 40, "0123456789abcdef"),
               "private_key": key, "client_email": f"reader@{project}.iam.gserviceaccount.com",
               "client_id": str(rng.randrange(10**20, 10**21)), "token_uri": "https://oauth2.googleapis.com/token"}
        objs.append(_secret("ci", f"gcp-key-{i}", "Opaque", {"key.json": json.dumps(doc)}))
        secret.append(key.splitlines()[2])
        public += [project, doc["client_id"], doc["client_email"]]
    out["cloud key file"] = (objs, secret, public)
    objs, secret, public = [], [], []
    for i in range(PER_CLASS // 4):
        cert, key = pem_pair()
        objs.append(_secret("ingress", f"tls-{i}", "kubernetes.io/tls", {"tls.crt": cert, "tls.key": key}))
        secret.append(key.splitlines()[2])
        public.append(cert.splitlines()[3])
    out["kubernetes.io/tls"] = (objs, secret, public)
    objs, secret, public = [], [], []
    for i in range(PER_CLASS):
        reg, user, pw = f"registry{i}.example.com", f"robot-{3000 + i}", _rand(rng, 22)
        auth = base64.b64encode(f"{user}:{pw}".encode()).decode()
        cfg = {"auths": {reg: {"username": user, "password": pw, "auth": auth}}}
        objs.append(_secret("apps", f"regcred-{i}", "kubernetes.io/dockerconfigjson",
                            {".dockerconfigjson": json.dumps(cfg)}))
        secret += [pw, auth]
        public += [reg, user]
    out["dockerconfigjson"] = (objs, secret, public)
    objs, secret, public = [], [], []
    for i in range(PER_CLASS // 4):
        ca, _ = pem_pair()
        token = "eyJhbGciOiJSUzI1NiJ9." + _rand(rng, 60) + "." + _rand(rng, 40)
        objs.append(_secret(f"ns-{i}", "default-token", "kubernetes.io/service-account-token",
                            {"ca.crt": ca, "namespace": f"ns-{i}", "token": token}))
        secret.append(token)
        public += [ca.splitlines()[3], f"ns-{i}"]
    out["service-account-token"] = (objs, secret, public)
    texts, secret, public = [], [], []
    for i in range(PER_CLASS):
        key, host, user = "sk_live_" + _rand(rng, 24), f"api{i}.example.com", f"deploy_{4000 + i}"
        texts.append(f"STRIPE_KEY={key}\nAPI_HOST={host}\nDB_USER={user}\nDATABASE_URL=postgres://{user}:"
                     f"{(pw := _rand(rng, 16))}@{host}:5432/app\nDEBUG=false\n")
        secret += [key, pw]
        public += [host, user]
    out[".env file"] = (texts, secret, public)
    texts, secret, public = [], [], []
    keys = ("DB_PASS", "SMTP_PWD", "ADMIN_PASSWORD", "SIGNING_SALT", "WEBHOOK_HMAC", "LDAP_PASSWD", "APP_KEY")
    for i in range(PER_CLASS):
        short, pw = _rand(rng, 6 + i % 4), _rand(rng, 8)
        host, user = f"db{i}.internal", f"svc_{5000 + i}"
        texts.append(f"{keys[i % len(keys)]}={short}\nDB_USER={user}\nDB_HOST={host}\n"
                     f"DB_CONN=host={host} user={user} password={pw}\nDB_KEY_ID=key-{i}\n")
        secret += [short, pw]
        public += [host, user]
    out["short credentials in .env"] = (texts, secret, public)
    return out


def known_of(cls: str, items: list) -> dict[str, str]:
    if cls.endswith(".env file") or cls.endswith("in .env"):
        pairs = [(f"{sid}{suffix}", kept) for n, t in enumerate(items)
                 for sid, v in secret_values.text_values(t, f"{n}.env", env=True)
                 for suffix, kept in setting_values(sid.rpartition(":")[2], v)]
    else:
        pairs = [p for obj in items for p in kube_secrets.values(obj, "bench")]
    return secret_values.keyed(pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--debs", type=Path, default=Path(tempfile.gettempdir()) / "muninn-undeclared-debs")
    args = parser.parse_args()
    rng = random.Random(31)
    all_known: dict[str, str] = {}
    out = [HEADING, "", "Written by `evals/lab/bench_known_values.py`. Secrets of each type a cluster holds, and "
           "`.env` files, generated per class and read as `kube_secrets` and the repo source read them. *Kept*: the "
           "secret value is a known value and export redacts it. *Left visible*: a public or identifying value "
           "of the same object (host, user name, namespace, port, database, CA and TLS certificate lines, "
           "registry, project id, client id) is not a known value.", "",
           "| class | secret values | kept and redacted | public values | left visible |", "|---|---:|---:|---:|---:|"]
    for cls, (items, secret, public) in cases(rng).items():
        known = known_of(cls, items)
        all_known.update(known)
        export = Redactor.for_facts(known)
        kept = sum(v in known and v not in export.redact_values(f"the value is {v} here").text for v in secret)
        left = sum(v not in known and v in export.redact_values(f"see {v} here").text for v in public)
        out.append(f"| {cls} | {len(secret)} | {kept} | {len(public)} | {left} |")
    work = Path(tempfile.mkdtemp())
    try:
        texts = manual_texts(fetch_debs(args.debs), work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    texts["prose set"] = [(p.name, p.read_text(errors="replace")) for p in PROSE_FILES if p.is_file()]
    with_values, none = Redactor.for_facts(all_known), Redactor.for_facts({})
    out += ["", f"False redactions on ordinary text, with all {len(all_known)} known values of those cases: "
            "value-pass redactions with them, and without any (the new source's cost is the difference). "
            "*Config lines*: the same text read as if each file were a config file held in a Secret, and how "
            "many of its `key: value` lines would become known values.", "",
            "| text | files | characters | value redactions with them | without | config lines that would pass |",
            "|---|---:|---:|---:|---:|---:|"]
    for corpus, files in texts.items():
        hits = sum(len(with_values.redact_values(t).hits) for _, t in files)
        base = sum(len(none.redact_values(t).hits) for _, t in files)
        lines = sum(len(secret_values.text_values(t, name, env=False)) for name, t in files)
        passing = sum(1 for name, t in files for _ in config_values(t, name))
        size = sum(len(t) for _, t in files)
        out.append(f"| {corpus} | {len(files)} | {size:,} | {hits} | {base} | {passing} of {lines:,} |")
    section = "\n".join(out) + "\n"
    old = RESULTS.read_text() if RESULTS.exists() else ""
    start = old.find(HEADING)
    if start < 0:
        text = old.rstrip("\n") + "\n\n" + section
    else:
        end = old.find("\n## ", start + len(HEADING))
        text = old[:start] + section + (old[end + 1:] if end >= 0 else "")
    RESULTS.write_text(text)
    print(section)

if __name__ == "__main__":
    main()
