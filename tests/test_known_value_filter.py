"""The filter for values read from where secrets live (Kubernetes Secrets, a repo's `.env` files), by class:
a credential key keeps a short password, a secret inside a value is a value of its own, a config file held
in a Secret gives up its secrets, and a repo's working copy is read whatever git says. Each class has
controls: host names, user names, namespaces, certificates and public keys stay out."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from muninn.core.config import load as load_settings
from muninn.export import sources
from muninn.guards.known import secret_values
from muninn.guards.known.setting_values import credential_key, setting_values
from muninn.plugins.access import kube_secrets


def _kept(key: str, value: str) -> set[str]:
    return set(secret_values.keyed((f"t:{key}{s}", v) for s, v in setting_values(key, value)))


def _secret(data: dict[str, str], typ: str = "Opaque") -> dict:
    return {"kind": "Secret", "type": typ, "metadata": {"namespace": "payments", "name": "app"},
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}


def _kube(data: dict[str, str], typ: str = "Opaque") -> dict[str, str]:
    return secret_values.keyed(kube_secrets.values(_secret(data, typ), "prod"))


# --- 1. a key that names a credential keeps a short or word-like password ----------------------------

@pytest.mark.parametrize(("key", "value"), [
    ("MYSQL_ROOT_PASSWORD", "Qx7mz!"), ("REDIS_PASSWORD", "b4nanas"), ("admin-password", "sunflower42"),
    ("smtpPassword", "my dog has fleas"), ("PGPASSWORD", "letmein99"), ("ELASTIC_PASSWORD", "elasticsearchuser"),
    ("ldap_bind_pw", "Wint3r!x"), ("RABBITMQ_DEFAULT_PASS", "guest-guest"), ("KEYSTORE_PASSPHRASE", "blue moon rising"),
])
def test_a_credential_key_keeps_a_short_password(key: str, value: str) -> None:
    assert value in _kept(key, value)
    assert value in _kube({key: value})
    assert value in _kube({key: value + "\n"})   # `echo pw | base64` leaves a newline in the Secret


@pytest.mark.parametrize(("url", "password"), [
    ("amqp://guest:b4nanas@rabbit:5672/", "b4nanas"),
    ("mongodb+srv://app:Qx7mz!9@cluster0.example.net/db", "Qx7mz!9"),
    ("mysql://root:letmein99@db/app", "letmein99"),
    ("rediss://default:Sunfl0wer@cache.internal:6380/2", "Sunfl0wer"),
    ("ftp://backup:floodgatekeeper@files.internal/", "floodgatekeeper"),
])
@pytest.mark.parametrize("key", ["BROKER_URL", "STORE_DSN", "CACHE_ENDPOINT", "uri"])
def test_a_urls_password_is_a_value_of_its_own_beside_the_url(key: str, url: str, password: str) -> None:
    kept = _kept(key, url)
    assert url in kept and password in kept
    assert {url, password} <= set(_kube({key: url}))


@pytest.mark.parametrize("url", ["mysql://root:password@localhost/db", "redis://default:sunflower@cache:6379/0"])
def test_a_urls_one_word_password_stays_inside_the_url(url: str) -> None:
    """The URL is redacted whole; `password` or `sunflower` alone in the known set would censor prose."""
    kept = _kept("CACHE_URL", url)
    assert kept == {url}


@pytest.mark.parametrize(("key", "value"), [
    ("DB_PASSWORD", "changeme"), ("REDIS_PASSWORD", "${REDIS_PASSWORD}"), ("SMTP_PASSWORD", "<your password>"),
    ("PASSWORD", "********"), ("AUTH_URL", "https://auth.example.com/realms/main"),
    ("PASSWORD_FILE", "/run/secrets/db"), ("admin_password", "secret"), ("TOKEN_TTL", "3600"),
    # prose read as a config file: a sentence, markup, apt's `Pin`, a relative path, a bracketed stand-in
    ("password", "is asked for at the prompt on every login"), ("DB_PASSWORD", "authentication."),
    ("Pin", "release a=stable"), ("token", "`--token` flag"), ("TRUSTED_KEYS", "debian/certs/uefi-certs.pem"),
    ("secrets", "[ops-deploy-token]"), ("PYTHON_KEYRING_BACKEND", "keyrings.alt.file.PlaintextKeyring"),
])
def test_a_credential_key_does_not_keep_stand_ins_words_or_addresses(key: str, value: str) -> None:
    assert value not in _kept(key, value)


# --- 2. keys that hold secrets are not read as identifiers ----------------------------------------

@pytest.mark.parametrize(("key", "value"), [
    ("MAIL_PASS", "Plum8Tree"), ("FTP_PWD", "Gl4cier"), ("LDAP_BIND_PASSWD", "Orch1d#"), ("COOKIE_SALT", "peppermill7"),
    ("WEBHOOK_HMAC", "a9f3k2m1"), ("SESSION_PEPPER", "Rock5alt"), ("APP_KEY", "base64:Zm9vYmFyYmF6"),
    ("SENTRY_DSN", "https://abc123def456@o0.ingest.sentry.io/1"), ("host_pass", "Hedge7hog"),
    ("ACCOUNT_PASS", "Dune4Sand"), ("apiUserPass", "Cobalt9"),
])
def test_secret_key_spellings_are_credentials(key: str, value: str) -> None:
    assert credential_key(key)
    assert value in _kept(key, value)


@pytest.mark.parametrize(("key", "value", "secret"), [
    ("MSSQL_SERVER", "Server=tcp:sql1,1433;Initial Catalog=app;User ID=svc;Password=Mang0!Tree;", "Mang0!Tree"),
    ("ODBC", "Driver={PostgreSQL};Server=db;Uid=svc;Pwd=Cedar9x;", "Cedar9x"),
    ("AZURE_STORAGE", "DefaultEndpointsProtocol=https;AccountName=acct1;AccountKey=Zm9vYmFyYmF6cXV4cXV1eA==;"
                      "EndpointSuffix=core.windows.net", "Zm9vYmFyYmF6cXV4cXV1eA=="),
    ("LIBPQ_DB", "dbname=app user=svc password='two words here' sslmode=require", "two words here"),
    ("ORACLE_HOST", "jdbc:oracle:thin:@db:1521/ORCL?user=svc&password=Birch7wood", "Birch7wood"),
    ("PG_CONN", "host=db port=5432 user=svc sslpassword=Kelp4Reef", "Kelp4Reef"),
    ("QUEUE_ADDR", "broker:9092?sasl.username=svc&sasl.password=Fjord8", "Fjord8"),
    ("SEARCH_USER", "elastic;secret=Tide3Pool", "Tide3Pool"),
])
def test_a_value_holding_a_password_gives_the_password_whatever_its_key(key: str, value: str, secret: str) -> None:
    kept = _kept(key, value)
    assert secret in kept and value in kept
    assert secret in _kube({key: value})


@pytest.mark.parametrize(("key", "value"), [
    ("DB_USER", "svc_reporting2"), ("POSTGRES_HOST", "db-7f3k2.internal"), ("CLIENT_ID", "a8f3k2m9x7q1"),
    ("TOKEN_ID", "tok8f3k2m9x"), ("SECRET_NAME", "prod-db-creds2"), ("KUBE_NAMESPACE", "payments-2024"),
    ("AWS_REGION", "eu-west-1"), ("S3_BUCKET", "acme-logs-7x9"), ("DB_CONN_TIMEOUT", "30s"),
    ("login", "deploy7bot"), ("username", "j.doe2024"), ("api_key_id", "AK7x9Qm2Lp"), ("PUBLIC_KEY_PATH", "k9/pub"),
    ("SMTP_USERNAME", "mailer99x"), ("project_name", "billing2api"),
])
def test_identifier_keys_stay_out(key: str, value: str) -> None:
    assert not credential_key(key)
    assert _kept(key, value) == set()
    assert _kube({key: value}) == {}


# --- 3. config files inside a Secret ------------------------------------------------------------

CA = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2FeLjz3\nZXhhbXBsZS5jb20wHhcNMjQw\n-----END CERTIFICATE-----"
KEY = ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB\n"
       "AAAAMwAAAAtzc2gtZWQyNTUxOQAAACDv3k2mZ7pLxQ9vW2yB6cD4\n-----END OPENSSH PRIVATE KEY-----")
CASES = {
    "toml with a ca beside the password": (
        {"app.toml": "[tls]\nca = '''\n" + CA + "\n'''\n[database]\nhost = \"db1.example.com\"\n"
                     "password = 'Fj4kQp9zW2'  # rotated monthly\n"},
        ["Fj4kQp9zW2"], ["db1.example.com", "MIIBszCCAVmgAwIBAgIUQ2FeLjz3"]),
    "netrc on one line, quoted": (
        {"netrc": 'machine git.example.org login deploy password "Gr4pe Vine77"\n'
                  "default login anonymous password Pear7Jam\n"},
        ["Gr4pe Vine77", "Pear7Jam"], ["git.example.org", "deploy", "anonymous"]),
    "pgpass with wildcards and a comment": (
        {"pgpass.conf": "# replica\n*:*:*:replicator:R3plic8!now\ndb2.internal:6432:billing:svc:Quince5\n"},
        ["R3plic8!now", "Quince5"], ["replicator", "db2.internal", "billing"]),
    "xml attribute and element": (
        {"context.xml": '<Context>\n  <Resource name="jdbc/app" user="svc" password="Oak5Leaf!"/>\n'
                        "  <DbPassword>Elm4Root#</DbPassword>\n  <Host>db3.internal</Host>\n</Context>\n"},
        ["Oak5Leaf!", "Elm4Root#"], ["svc", "db3.internal", "jdbc/app"]),
    "java properties": (
        {"hibernate.properties": "hibernate.connection.url=jdbc:mysql://db/app?user=svc&password=Fig8Tart\n"
                                 "quarkus.datasource.password=Lime3Pie!\nquarkus.datasource.username=svc\n"},
        ["Fig8Tart", "Lime3Pie!"], ["svc"]),
    "json with comments": (
        {"settings.jsonc": '{\n  // prod\n  "apiSecret": "Kiwi6Salsa",\n  "port": 5432,\n'
                           '  "host": "api4.internal",\n}\n'},
        ["Kiwi6Salsa"], ["api4.internal"]),
    "ini with a quoted value and a comment": (
        {"app.ini": "[auth]\nsecret_key = 'Mango2Lassi' ; prod\nuser = svc\n"}, ["Mango2Lassi"], ["svc"]),
    "wireguard": (
        {"wg0.conf": "[Interface]\nPrivateKey = yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=\n[Peer]\n"
                     "PublicKey = xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=\nEndpoint = vpn.example.com:51820\n"},
        ["yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk="],
        ["xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=", "vpn.example.com:51820"]),
    "yaml with an indented private key and a password": (
        {"values.yaml": "ssh:\n  key: |\n" + "".join(f"    {line}\n" for line in KEY.splitlines())
                        + "  knownHost: github.com\nsmtp:\n  pass: Heron3Lake\n"},
        [KEY, "Heron3Lake"], ["github.com"]),
    "tls.crt holding a key after the certificate": (
        {"tls.crt": CA + "\n" + KEY + "\n"}, [KEY], ["MIIBszCCAVmgAwIBAgIUQ2FeLjz3", CA]),
    "openvpn with an inline tls-crypt key": (
        {"client.conf": "remote vpn.example.com 1194\n<tls-crypt>\n-----BEGIN OpenVPN Static key V1-----\n"
                        "e5c9a0b6f1d2c3b4a5968778695a4b3c\n-----END OpenVPN Static key V1-----\n</tls-crypt>\n"},
        ["-----BEGIN OpenVPN Static key V1-----\ne5c9a0b6f1d2c3b4a5968778695a4b3c\n"
         "-----END OpenVPN Static key V1-----"],
        ["vpn.example.com"]),
}


@pytest.mark.parametrize("case", CASES)
def test_config_files_in_a_secret_give_up_their_secrets(case: str) -> None:
    data, secrets, public = CASES[case]
    known = _kube(data)
    for value in secrets:
        assert value in known, value
    for value in public:
        assert value not in known, value


def test_a_registry_password_that_is_a_key_file_gives_its_private_key() -> None:
    pem = ("-----BEGIN PRIVATE KEY-----\nMIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDx\n"
           "-----END PRIVATE KEY-----\n")
    keyfile = json.dumps({"type": "service_account", "project_id": "acme-prod-7", "private_key": pem,
                          "client_email": "pull@acme-prod-7.iam.gserviceaccount.com"})
    auth = base64.b64encode(f"_json_key:{keyfile}".encode()).decode()
    doc = json.dumps({"auths": {"europe-docker.pkg.dev": {"username": "_json_key", "password": keyfile, "auth": auth}}})
    known = _kube({".dockerconfigjson": doc}, "kubernetes.io/dockerconfigjson")
    assert pem.strip() in known and keyfile in known
    assert "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDx" in known   # pasted with `\n` escapes
    for public in ("acme-prod-7", "pull@acme-prod-7.iam.gserviceaccount.com", "europe-docker.pkg.dev", "_json_key"):
        assert public not in known


# --- 4. a repo's .env files: the working copy, at every level ---------------------------------------

def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"})


def _repo_known(path: Path, ref: str = "HEAD") -> dict[str, str]:
    return secret_values.keyed(sources.build("repo", path, {"ref": ref}).known_values())


def test_a_folder_that_is_not_a_git_repository_still_gives_its_env(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("MAIL_PASS=Plum8Tree\nMAIL_USER=mailer7\n")
    known = _repo_known(tmp_path)
    assert "Plum8Tree" in known and "mailer7" not in known


def test_a_bad_ref_still_reads_the_working_copy_at_every_level(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "README.md").write_text("# x\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "init")
    deep = tmp_path / "services" / "web" / "config"
    deep.mkdir(parents=True)
    (deep / ".env").write_text("SMTP_PASS=Gl4cier9\nSMTP_HOST=mail3.internal\n")
    (tmp_path / "deploy" / "k8s").mkdir(parents=True)
    (tmp_path / "deploy" / "k8s" / "staging.env").write_text("QUEUE_DSN=amqp://svc:Heron3Lake@mq/\n")
    known = _repo_known(tmp_path, ref="no-such-branch")
    assert {"Gl4cier9", "Heron3Lake"} <= set(known) and "mail3.internal" not in known


def test_an_env_with_a_latin1_byte_is_read(tmp_path: Path) -> None:
    (tmp_path / ".env").write_bytes("SMTP_PASSWORD=CaféCrème9\nAPP_NAME=café\n".encode("latin-1"))
    assert "CaféCrème9" in _repo_known(tmp_path)


def test_envrc_export_lines_are_read(tmp_path: Path) -> None:
    (tmp_path / ".envrc").write_text("use nix\nlayout python3\nexport VAULT_TOKEN=s.Xk9pQ2mZ7rT4\n"
                                     "export DB_PASS='Rowan4Ash'\nPATH_add bin\n")
    known = _repo_known(tmp_path)
    assert {"s.Xk9pQ2mZ7rT4", "Rowan4Ash"} <= set(known)


def test_vendored_folders_and_templates_are_not_read(tmp_path: Path) -> None:
    for where in ("node_modules/left-pad", ".venv", "vendor/lib", ".git/hooks", "env-tool"):
        (tmp_path / where).mkdir(parents=True)
        (tmp_path / where / ".env").write_text("API_PASS=Vend0rPass\n")
    (tmp_path / "env-tool" / "pyvenv.cfg").write_text("home = /usr/bin\n")   # a virtualenv by another name
    (tmp_path / ".env.sample").write_text("API_PASS=Sampl3Pass\n")
    (tmp_path / "apps" / "api").mkdir(parents=True)
    (tmp_path / "apps" / "api" / ".env.template").write_text("API_PASS=Templ8Pass\n")
    known = _repo_known(tmp_path)
    assert not {"Vend0rPass", "Sampl3Pass", "Templ8Pass"} & set(known)


def test_a_short_repo_password_survives_the_one_collector(tmp_path: Path) -> None:
    """`known` applies the credential rule the reader chose: a keyed source's short password stays."""
    repo = tmp_path / "svc"
    repo.mkdir()
    (repo / ".env").write_text("DB_PASS=Gl4cier9\nDB_USER=svc_app7\n")
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"sources": [{"kind": "repo", "path": str(repo), "area": "viking://resources/r"}]}))
    known = secret_values.known(load_settings(cfg))
    assert known.get("Gl4cier9") == "env:svc/.env:DB_PASS" and "svc_app7" not in known
