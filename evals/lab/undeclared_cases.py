"""Generated cases of undeclared secrets, by class, and of identifiers that must survive.

Built from the class, not from the issue's examples: secrets are drawn at random in the shapes each
class holds (seeded, so a failure reproduces), and written into the layouts notes use (prose, a
table cell, a heading and the line under it, a bullet, a code block). `cases()` returns
(class, text, secret) triples; `survivors()` (kind, text, identifier) ones. Used by
tests/test_undeclared.py and evals/lab/bench_undeclared.py.
"""

from __future__ import annotations

import base64
import random
import string
import uuid

SEED = 31
_B64 = string.ascii_letters + string.digits + "+/"
_ALNUM = string.ascii_letters + string.digits
_LOWER = string.ascii_lowercase + string.digits
_HEX = "0123456789abcdef"


def _draw(rng: random.Random, alphabet: str, n: int, need: str = "") -> str:
    while True:
        s = "".join(rng.choice(alphabet) for _ in range(n))
        if all(any(c in group for c in s) for group in need.split()):
            return s


def _password(rng: random.Random) -> str:
    """What people choose: a word, a number, a symbol; or random characters."""
    words = ["Sommer", "Winter", "Garten", "Kaffee", "Purple", "Monkey", "Dragon", "Soleil", "Verano", "Lente"]
    if rng.random() < 0.5:
        return rng.choice(words) + str(rng.randint(10, 9999)) + rng.choice("!#%&?*+@")
    # Not `&` (a shell's background operator) nor a leading `-` (an option, to every parser).
    return _draw(rng, _ALNUM, 1) + _draw(rng, _ALNUM + "!#%*+-_@", rng.randint(9, 17),
                                         f"{string.ascii_lowercase} {string.digits}")


# Vendors with the secret shapes they issue (gitleaks' generic rules: hex 32/40, alnum 24-64).
VENDOR_SHAPES = {
    "datadog": (_HEX, 32), "Datadog app": (_HEX, 40), "algolia": (_LOWER, 32), "asana": (_LOWER, 32),
    "bitbucket": (_LOWER, 32), "cloudflare": (_LOWER + "_-", 40), "codecov": (_LOWER, 32),
    "confluent": (_LOWER, 64), "contentful": (_ALNUM, 43), "dynatrace": (_ALNUM, 40), "fastly": (_ALNUM, 32),
    "heroku": (_HEX, 32), "hubspot": (_LOWER, 36), "mailgun": (_HEX, 32), "mapbox": (_ALNUM, 60),
    "netlify": (_ALNUM, 43), "newrelic": (_HEX, 40), "okta": (_ALNUM, 42), "pagerduty": (_ALNUM, 20),
    "postman": (_LOWER, 64), "sendgrid": (_ALNUM, 43), "sentry": (_HEX, 64), "shopify": (_HEX, 32),
    "snyk": (_LOWER, 36), "splunk": (_ALNUM, 36), "square": (_ALNUM, 44), "sumologic": (_ALNUM, 64),
    "twilio": (_HEX, 32), "twitch": (_LOWER, 30), "zendesk": (_ALNUM, 40), "grafana": (_ALNUM, 44),
    "launchdarkly": (_ALNUM, 40), "mixpanel": (_HEX, 32), "pusher": (_HEX, 20), "rollbar": (_HEX, 32),
    "segment": (_ALNUM, 32), "supabase": (_ALNUM, 40), "vercel": (_ALNUM, 24), "linode": (_HEX, 64),
    "digitalocean": (_HEX, 64),
}
VENDOR_LAYOUTS = (
    "the {v} api key {s}",
    "{v}: {s}",
    "{V} token {s} (prod)",
    "- {v} key `{s}`",
    "| {v} | {s} |",
    "set up {v} yesterday, secret is {s}",
    "{V} API-Key = {s}",
)
AWS_LAYOUTS = (
    "{k} / {s}",
    "aws {k} {s}",
    "key {k}\n{s}",
    "| prod | {k} | {s} |",
    "{k}:{s}",
    "id {k}, and the other one {s}",
    "- {k}\n- {s}",
)


def vendor_pairs(rng: random.Random) -> list[tuple[str, str]]:
    out = []
    for vendor, (alphabet, n) in VENDOR_SHAPES.items():
        for layout in VENDOR_LAYOUTS:
            need = "0123456789" if alphabet != _HEX else ""
            s = _draw(rng, alphabet, n, need)
            out.append((layout.format(v=vendor, V=vendor.title(), s=s), s))
    for layout in AWS_LAYOUTS:
        for _ in range(4):
            k = "AKIA" + _draw(rng, string.ascii_uppercase + "234567", 16)
            s = _draw(rng, _B64, 40, f"{string.ascii_lowercase} {string.ascii_uppercase} {string.digits}")
            out.append((layout.format(k=k, s=s), s))
    return out


BARE_LAYOUTS = (
    "| {name} | {s} |",
    "| {name} | prod | {s} | rotated 2024-03 |",
    "## {Name}\n\n{s}\n",
    "### {Name}\n`{s}`",
    "- {s}",
    "> {s}",
    "```\n{s}\n```",
    "{s}",
    "use {s} for the staging bot",
)


def bare_tokens(rng: random.Random) -> list[tuple[str, str]]:
    out = []
    names = ["deploy bot", "ci runner", "grafana", "backup job", "the bot", "webhook", "nightly"]
    for layout in BARE_LAYOUTS:
        for n in (22, 30, 36, 46, 59):
            s = _draw(rng, _ALNUM + ("_-" if n % 2 else ""), n,
                      f"{string.ascii_lowercase} {string.ascii_uppercase} {string.digits}")
            name = rng.choice(names)
            out.append((layout.format(s=s, name=name, Name=name.title()), s))
    # Telegram-shaped: a bot id, a colon, the token.
    for layout in BARE_LAYOUTS[:4]:
        s = _draw(rng, _ALNUM + "_-", 35, f"{string.ascii_lowercase} {string.ascii_uppercase} {string.digits}")
        out.append((layout.format(s=f"{rng.randint(10**9, 10**10)}:{s}", name="bot", Name="Bot"), s))
    return out


PASSWORD_LABELS = (
    "password", "Password", "PASSWORD", "passwd", "passphrase", "Passwort", "Kennwort", "WLAN-Schlüssel",
    "mot de passe", "Mot de passe", "mdp", "contraseña", "clave", "senha", "wachtwoord", "lösenord",
    "adgangskode", "passord", "salasana", "hasło", "heslo", "jelszó", "parola", "lozinka", "geslo",
    "пароль", "Пароль", "şifre", "κωδικός", "密码", "パスワード", "비밀번호", "mật khẩu", "kata sandi", "PIN",
    "Wi-Fi key", "WPA key", "psk",
)
LABEL_LAYOUTS = (
    "{l}: {p}",
    "{l} = {p}",
    "**{l}:** {p}",
    "{l} {p}",
    "- {l}: `{p}`",
    "| {l} | {p} |",
    "router admin, {l}: {p}",
    "{l}：{p}",
)
PAIR_LAYOUTS = (
    "{u} / {p}",
    "login {u} / {p}",
    "| user | password |\n|---|---|\n| {u} | {p} |",
    "| host | login | {l} |\n| --- | --- | --- |\n| db1 | {u} | {p} |",
    "## {L}\n{p}",
    "{l}:\n\n{p}",
)


def user_passwords(rng: random.Random) -> list[tuple[str, str]]:
    out = []
    users = ["admin", "root", "bob", "deploy", "svc_backup", "alice.smith", "ops@example.com", "postgres"]
    for label in PASSWORD_LABELS:
        for layout in LABEL_LAYOUTS:
            p = _password(rng)
            out.append((layout.format(l=label, p=p), p))
    for label in PASSWORD_LABELS[::3]:
        for layout in PAIR_LAYOUTS:
            p = _password(rng)
            out.append((layout.format(u=rng.choice(users), p=p, l=label, L=label.title()), p))
    return out


# Programs and their secret-taking options as their manuals state them, written independently of
# guards/undeclared/credential_options.py: (command before, option, spellings allowed, form, command after).
MANUAL_OPTIONS = (
    ("mysql -u root", "-p", "attached", "{p}", "shop"),
    ("mysql -u root", "--password", "equals", "{p}", "shop"),
    ("mysqldump -h db1 -u backup", "-p", "attached", "{p}", "--all-databases"),
    ("mariadb -u root", "--password", "equals", "{p}", ""),
    ("curl -s", "-u", "space attached equals", "deploy:{p}", "https://ci.example.com/api"),
    ("curl", "--user", "space equals", "bob:{p}", "https://x.example.com"),
    ("curl -x proxy:3128", "--proxy-user", "space", "bob:{p}", "https://x"),
    ("wget", "--password", "space equals", "{p}", "--user bob ftp://files"),
    ("wget", "--http-password", "space equals", "{p}", "https://x"),
    ("wget", "--ftp-password", "equals", "{p}", "ftp://x"),
    ("smbclient //nas/share", "-U", "space attached", "alice%{p}", ""),
    ("smbclient //nas/share", "--user", "space equals", "alice%{p}", ""),
    ("rpcclient 10.0.0.5", "-U", "space", "admin%{p}", ""),
    ("lftp", "-u", "space", "bob,{p}", "ftp.example.com"),
    ("lftp -e 'mirror'", "-u", "space", "bob,{p}", "sftp://h"),
    ("ldapsearch -x -H ldap://dc1 -D cn=admin,dc=ex", "-w", "space attached", "{p}", "-b dc=ex"),
    ("ldapmodify -x -D cn=admin", "-w", "space", "{p}", "-f x.ldif"),
    ("ldapadd -x -D cn=admin", "-w", "space", "{p}", "-f x.ldif"),
    ("ldappasswd -x -D cn=admin -w secretpw1 -S", "-s", "space", "{p}", "uid=bob"),
    ("openssl pkcs12 -export -in c.pem", "-passout", "space", "pass:{p}", "-out c.p12"),
    ("openssl rsa -in k.pem", "-passin", "space", "pass:{p}", "-out k2.pem"),
    ("openssl enc -aes-256-cbc -in f", "-pass", "space", "pass:{p}", "-out f.enc"),
    ("sshpass", "-p", "space attached", "{p}", "ssh bob@h"),
    ("redis-cli -h cache1", "-a", "space", "{p}", "ping"),
    ("redis-cli", "--pass", "space", "{p}", "info"),
    ("mongosh mongodb://db1 -u admin", "-p", "space", "{p}", ""),
    ("mongodump -u backup", "--password", "space equals", "{p}", "--out /tmp/d"),
    ("docker login registry.example.com -u ci", "-p", "space", "{p}", ""),
    ("docker login -u ci", "--password", "space equals", "{p}", "ghcr.io"),
    ("podman login quay.io -u bot", "-p", "space", "{p}", ""),
    ("helm repo add charts https://c.example.com --username ci", "--password", "space equals", "{p}", ""),
    ("helm registry login r.example.com -u ci", "--password", "space", "{p}", ""),
    ("keytool -importcert -keystore ks.jks", "-storepass", "space", "{p}", "-file c.crt"),
    ("keytool -genkey -keystore ks.jks", "-keypass", "space", "{p}", ""),
    ("xfreerdp /v:win1 /u:admin", "/p:", "attached", "{p}", ""),
    ("ipmitool -I lanplus -H bmc1 -U admin", "-P", "space attached", "{p}", "power status"),
    ("sqlcmd -S db1 -U sa", "-P", "space", "{p}", "-Q 'select 1'"),
    ("zip -r backup.zip docs", "-P", "space", "{p}", ""),
    ("unzip", "-P", "space", "{p}", "backup.zip"),
    ("7z a archive.7z docs", "-p", "attached", "{p}", ""),
    ("snmpwalk -v3 -u mon -l authPriv -a SHA", "-A", "space", "{p}", "-x AES -X x9Privpass2 host"),
    ("svn checkout https://svn.example.com/r --username bob", "--password", "space", "{p}", ""),
    ("az login --service-principal -u 1b2c -t tenant", "-p", "space", "{p}", ""),
    ("kubectl config set-credentials bob", "--password", "space equals", "{p}", ""),
    ("kubectl config set-credentials ci", "--token", "space equals", "{p}", ""),
    ("argocd login cd.example.com --username admin", "--password", "space equals", "{p}", ""),
    ("twine upload dist/* -u __token__", "-p", "space", "{p}", ""),
    ("gpg --batch", "--passphrase", "space", "{p}", "-d file.gpg"),
    ("ssh-keygen -t ed25519 -f k", "-N", "space", "{p}", ""),
    ("rdesktop -u admin", "-p", "space", "{p}", "win1"),
    ("cqlsh db1 -u cassandra", "-p", "space", "{p}", ""),
    ("influx -username admin", "-password", "space", "{p}", ""),
)
ENV_LAYOUTS = ("{n}={p} psql -h db1", "export {n}={p}", "{n}='{p}' ./run.sh", "env {n}=\"{p}\" cmd")
ENV_NAMES = ("PGPASSWORD", "MYSQL_PWD", "RSYNC_PASSWORD", "SSHPASS", "REDISCLI_AUTH", "LFTP_PASSWORD",
             "TWINE_PASSWORD", "RESTIC_PASSWORD", "BORG_PASSPHRASE", "VAULT_TOKEN", "POSTGRES_PASSWORD",
             "MYSQL_ROOT_PASSWORD", "RABBITMQ_DEFAULT_PASS", "MINIO_ROOT_PASSWORD", "GRAFANA_ADMIN_PASSWORD")
ANSIBLE_VARS = ("ansible_password", "ansible_become_pass", "ansible_become_password", "ansible_ssh_pass",
                "ansible_sudo_pass")


def _spell(option: str, how: str, value: str) -> str:
    return {"space": f"{option} {value}", "equals": f"{option}={value}", "attached": f"{option}{value}"}[how]


def credential_options(rng: random.Random) -> list[tuple[str, str]]:
    out = []
    for before, option, spellings, form, after in MANUAL_OPTIONS:
        for how in spellings.split():
            p = _password(rng)
            value = form.format(p=p)
            out.append((f"$ {before} {_spell(option, how, value)} {after}".rstrip(), p))
            if how == "space":   # the same in a code block, quoted
                q = _password(rng).replace("'", "")
                out.append((f"```\n{before} {option} '{form.format(p=q)}' {after}\n```", q))
    for name in ENV_NAMES:
        for layout in ENV_LAYOUTS:
            p = _password(rng)
            out.append((layout.format(n=name, p=p), p))
    for var in ANSIBLE_VARS:
        for layout in ("web1 ansible_host=10.0.0.4 {v}={p}", "    {v}: {p}", "[all:vars]\n{v}={p}"):
            p = _password(rng)
            out.append((layout.format(v=var, p=p), p))
    for layout in ("machine {h} login bob password {p}", "machine {h}\n  login bob\n  password {p}",
                   "default login anonymous password {p}"):
        p = _password(rng).replace("#", "")
        out.append((layout.format(h="ftp.example.com", p=p), p))
    for prompt in ("*assword:*", "Password for bob:", "Enter passphrase", "Kennwort:", "PIN:"):
        p = _password(rng).replace('"', "").replace("\\", "")
        out.append((f'spawn ssh bob@h\nexpect "{prompt}"\nsend "{p}\\r"\ninteract', p))
    for _ in range(4):
        p = _password(rng)
        out.append((f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: {p}\n", p))
        b = base64.b64encode(_password(rng).encode()).decode()
        out.append((f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\ndata:\n"
                    f"  username: YWRtaW4=\n  password: {b}\n", b))
    for _ in range(3):
        p = _password(rng).replace(":", "")
        out.append((f"echo 'bob:{p}' | chpasswd", p))
    for _ in range(3):
        p = _password(rng)
        out.append((f"kubectl create secret generic db --from-literal=password={p}", p))
    return out


CLASSES = {
    "vendor-pair": vendor_pairs,
    "bare-token": bare_tokens,
    "user-password": user_passwords,
    "credential-option": credential_options,
}


def cases() -> list[tuple[str, str, str]]:
    rng = random.Random(SEED)
    return [(cls, text, secret) for cls, make in CLASSES.items() for text, secret in make(rng)]


def survivors() -> list[tuple[str, str, str]]:
    """Identifiers engineers search for, in lines that also carry words a detector might read."""
    rng = random.Random(SEED + 1)
    out: list[tuple[str, str, str]] = []

    def add(kind: str, layouts: tuple[str, ...], make) -> None:
        for layout in layouts:
            for _ in range(3):
                x = make()
                out.append((kind, layout.format(x=x), x))

    add("uuid", ("request id {x}", "| {x} | failed |", "tenant {x}", "{x}"),
        lambda: str(uuid.UUID(int=rng.getrandbits(128))))
    add("git-sha", ("fixed in {x}", "commit {x}", "git revert {x}", "| {x} | deploy |", "{x}"),
        lambda: _draw(rng, _HEX, 40))
    add("short-sha", ("see {x} and the follow-up", "cherry-pick {x}"), lambda: _draw(rng, _HEX, 12))
    add("sha256sum", ("{x}  debian-12.iso", "sha256 {x}", "checksum: {x}"), lambda: _draw(rng, _HEX, 64))
    add("image-digest", ("nginx@sha256:{x}", "image: ghcr.io/acme/api@sha256:{x}", "digest sha256:{x}"),
        lambda: _draw(rng, _HEX, 64))
    add("arn", ("role {x}", "| {x} |", "aws sts assume-role --role-arn {x}"),
        lambda: f"arn:aws:iam::{rng.randint(10**11, 10**12 - 1)}:role/Deploy{rng.randint(1, 99)}Role")
    add("k8s-pod", ("kubectl logs {x}", "pod {x} crashed", "| {x} | Running |"),
        lambda: f"api-{_draw(rng, 'bcdfghjklmnpqrstvwxz2456789', 10)}-{_draw(rng, 'bcdfghjklmnpqrstvwxz2456789', 5)}")
    add("gpg-fingerprint", ("gpg --recv-keys {x}", "fingerprint {x}", "key id {x}"),
        lambda: _draw(rng, "0123456789ABCDEF", 40))
    add("version", ("upgraded to {x}", "| api | {x} |", "pin {x}"),
        lambda: f"{rng.randint(1, 30)}.{rng.randint(0, 40)}.{rng.randint(0, 200)}-rc{rng.randint(1, 9)}"
                f"+build.{rng.randint(1, 999)}")
    add("ssh-public-key", ("ssh-ed25519 {x} bob@laptop", "authorized: ssh-rsa {x} ops"),
        lambda: "AAAAC3NzaC1lZDI1NTE5AAAAI" + _draw(rng, _B64, 43))
    add("certificate", ("-----BEGIN CERTIFICATE-----\n{x}\n-----END CERTIFICATE-----",),
        lambda: "MIIB" + _draw(rng, _B64, 60))
    add("pip-record", ("requests/api.py,sha256={x},6512",), lambda: _draw(rng, _ALNUM + "_-", 43))
    add("sri", ("integrity sha384-{x}", "| app.js | sha512-{x} |"), lambda: _draw(rng, _B64, 64))
    add("hostname", ("ssh {x}", "| {x} | up |"),
        lambda: f"ip-10-0-{rng.randint(0, 255)}-{rng.randint(0, 255)}.eu-west-1.compute.internal")
    add("path", ("see {x}", "config in {x}"), lambda: f"/var/lib/docker/overlay2/{_draw(rng, _HEX, 64)}/merged")
    base58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    add("ipfs", ("pinned {x}",), lambda: "Qm" + _draw(rng, base58, 44))
    add("lvm-uuid", ("  PV UUID               {x}", "lvchange --uuid {x}"),
        lambda: "-".join(_draw(rng, _ALNUM, n) for n in (6, 4, 4, 4, 4, 4, 6)))
    add("record-path", ("{x},sha256=AbC,512",),
        lambda: f"antlr4/{rng.choice(['Buffered', 'Common'])}TokenStream{rng.randint(2, 9)}.py")
    return out
