"""Credential options as a class: which programs take a secret on their command line, and how.

Read off the programs' manuals (mysql(1), psql(1) for PGPASSWORD, curl(1) -u/-U/--oauth2-bearer,
wget(1), smbclient(1) -U user%pass, lftp(1) -u user,pass, ldapsearch(1) -w, openssl-passphrase-options(1)
pass:, sshpass(1) -p, redis-cli -a, mongosh/mongodump -p, rsync(1) RSYNC_PASSWORD, htpasswd(1) -b,
docker-login(1) -p, helm repo add/registry login --password, keytool -storepass, xfreerdp /p:,
ipmitool -P, sqlcmd -P, zip -P, 7z -p, snmpwalk -A/-X, svn --password, nmcli `password`, kubectl
--from-literal, ...). One table row per program; each option is tried in every spelling its
program accepts: `-w VALUE`, `--password=VALUE`, `-pVALUE` attached, `/p:VALUE`.

Besides the table: the environment variables the same programs read, variables named for a secret
(`ansible_become_pass=`, `POSTGRES_PASSWORD: …`), `.netrc` lines, expect scripts' `send` after a
password prompt, `chpasswd` input, and Kubernetes Secret manifests (`stringData`, base64 `data`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Literal

import ahocorasick_rs

from muninn.guards.rules import is_placeholder

Form = Literal["secret", "user:secret", "user%secret", "user,secret", "pass:"]


@dataclass(frozen=True)
class Option:
    spellings: tuple[str, ...]
    form: Form = "secret"
    spaced: bool = True       # `-w VALUE` (mysql's `-p VALUE` prompts instead: False there)
    attached: bool = True     # `-wVALUE` for a one-letter option; `/p:VALUE` always is
    equals: bool = True       # `--password=VALUE`


@dataclass(frozen=True)
class Positional:
    """A secret given as the Nth plain word after `after` (a subcommand; "" is the program itself)."""

    after: str
    index: int
    when_flag: str = ""       # only when this one-letter flag is set (htpasswd -b)
    minus_if_flag: str = ""   # one word earlier when this flag is set (htpasswd -n: no file)


_MYSQL = (Option(("-p",), spaced=False), Option(("--password",), spaced=False))
_PW_LONG = Option(("--password", "--passwd", "--pass"))
_LDAP = (Option(("-w",)), Option(("-y",), form="secret", attached=False, spaced=False, equals=False))

PROGRAMS: dict[str, tuple[Option | Positional, ...]] = {
    **{p: _MYSQL for p in ("mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlcheck", "mysqlshow",
                           "mysqlpump", "mysqlsh", "mariadb", "mariadb-dump", "mariadb-admin", "mydumper", "myloader")},
    "curl": (Option(("-u", "--user", "-U", "--proxy-user"), form="user:secret"),
             Option(("--oauth2-bearer", "--pass", "--proxy-pass", "--key-pass")),
             Option(("-E", "--cert", "--proxy-cert"), form="user:secret", attached=True)),
    "wget": (Option(("--password", "--http-password", "--ftp-password", "--proxy-password", "--http-passwd",
                     "--ftp-passwd", "--proxy-passwd"), attached=False),),
    **{p: (Option(("-U", "--user"), form="user%secret"), Option(("--password",), attached=False))
       for p in ("smbclient", "smbcacls", "smbget", "rpcclient", "smbmap", "net", "smbpasswd", "mount.cifs")},
    "lftp": (Option(("-u", "--user"), form="user,secret"),),
    **{p: _LDAP for p in ("ldapsearch", "ldapmodify", "ldapadd", "ldapdelete", "ldapwhoami", "ldapcompare",
                          "ldapmodrdn", "ldapexop", "ldapurl")},
    "ldappasswd": (*_LDAP, Option(("-s", "-a"))),
    "openssl": (Option(("-passin", "-passout", "-pass", "-kdfpass", "-srcpass", "-destpass"),
                       form="pass:", attached=False, equals=False),
                Option(("-k",), attached=False, equals=False), Option(("-K",), attached=False, equals=False)),
    "sshpass": (Option(("-p",)),),
    "redis-cli": (Option(("-a", "--pass", "--askpass-never")),),
    "valkey-cli": (Option(("-a", "--pass")),),
    **{p: (Option(("-p", "--password")),) for p in ("mongo", "mongosh", "mongodump", "mongorestore",
                                                     "mongoexport", "mongoimport", "mongostat", "mongotop")},
    "htpasswd": (Positional("", 2, when_flag="b", minus_if_flag="n"),),
    **{p: (Option(("-p", "--password"), attached=False),) for p in ("docker", "podman", "nerdctl", "buildah",
                                                                     "skopeo", "oras", "crane", "regctl")},
    "helm": (Option(("--password", "--pass"), attached=False),),
    "keytool": (Option(("-storepass", "-keypass", "-srcstorepass", "-deststorepass", "-srckeypass",
                        "-destkeypass", "-new"), attached=False, equals=False),),
    "jarsigner": (Option(("-storepass", "-keypass"), attached=False, equals=False),),
    **{p: (Option(("/p:", "/password:"), attached=True, spaced=False, equals=False),)
       for p in ("xfreerdp", "wlfreerdp", "sdl-freerdp", "xfreerdp3")},
    "rdesktop": (Option(("-p",)),),
    "ipmitool": (Option(("-P",)),),
    **{p: (Option(("-P",)),) for p in ("sqlcmd", "bcp", "osql", "isql-mssql", "mssql-cli", "tsql")},
    "zip": (Option(("-P", "--password")),),
    "unzip": (Option(("-P",)),),
    "7z": (Option(("-p",), spaced=False),),
    "7za": (Option(("-p",), spaced=False),),
    "rar": (Option(("-p",), spaced=False),),
    "unrar": (Option(("-p",), spaced=False),),
    **{p: (Option(("-A", "-X")),) for p in ("snmpwalk", "snmpget", "snmpset", "snmpbulkwalk", "snmptrap")},
    "svn": (_PW_LONG,),
    "ncftp": (Option(("-p",)),),
    "ncftpput": (Option(("-p",)),),
    "ncftpget": (Option(("-p",)),),
    "pgloader": (),
    "influx": (Option(("-password", "--password", "-p", "--token", "-t")),),
    "psql": (),
    "az": (Option(("-p", "--password", "--client-secret"), attached=False),),
    "vault": (Positional("login", 0),),
    "rabbitmqctl": (Positional("add_user", 1), Positional("change_password", 1)),
    "nmcli": (Positional("password", 0), Option(("wifi-sec.psk", "802-1x.password"), attached=False)),
    "wpa_passphrase": (Positional("", 1),),
    "iwctl": (Option(("--passphrase",)),),
    "kubectl": (Option(("--password", "--token"), attached=False),),
    "oc": (Option(("-p", "--password", "--token"), attached=False),),
    "argocd": (Option(("--password", "--auth-token"), attached=False),),
    "gh": (Option(("--with-token",), attached=False, spaced=False),),
    "glab": (Option(("--token", "-t"), attached=False),),
    "twine": (Option(("-p", "--password"), attached=False),),
    "npm": (Option(("--_authToken", "--password"), attached=False),),
    "ansible": (Option(("--extra-vars", "-e"), attached=False, spaced=False),),
    "sqlplus": (),
    "cqlsh": (Option(("-p", "--password")),),
    "clickhouse-client": (_PW_LONG,),
    "influxd": (),
    "pg_basebackup": (),
    "mc": (),
    "rclone": (),
    "smbcquotas": (Option(("-U", "--user"), form="user%secret"),),
    "ssh-keygen": (Option(("-N", "-P"), attached=False),),
    "gpg": (Option(("--passphrase",), attached=False),),
    "gpg2": (Option(("--passphrase",), attached=False),),
    "chpasswd": (),
    "useradd": (),
    "hydra": (Option(("-p",)),),
    "pwsh": (),
}
# `kubectl create secret generic NAME --from-literal=KEY=VALUE`: the value after the second `=`.
FROM_LITERAL = re.compile(r"--from-literal[= ](?:'|\")?[\w.-]+=(?P<value>[^\s'\"]+)")

# Environment variables the programs above read their password or token from.
ENV_VARS = (
    "PGPASSWORD", "MYSQL_PWD", "RSYNC_PASSWORD", "SSHPASS", "REDISCLI_AUTH", "LFTP_PASSWORD", "PASSWD",
    "LDAPPASSWD", "DOCKER_PASSWORD", "HELM_REPO_PASSWORD", "TWINE_PASSWORD", "RESTIC_PASSWORD",
    "BORG_PASSPHRASE", "RCLONE_CONFIG_PASS", "VAULT_TOKEN", "CONSUL_HTTP_TOKEN", "NOMAD_TOKEN", "GITHUB_TOKEN",
    "GH_TOKEN", "GITLAB_TOKEN", "NPM_TOKEN", "NODE_AUTH_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
    "AZURE_CLIENT_SECRET", "ARM_CLIENT_SECRET", "DIGITALOCEAN_TOKEN", "HCLOUD_TOKEN", "CLOUDFLARE_API_TOKEN",
    "ANSIBLE_BECOME_PASS", "ANSIBLE_PASSWORD", "SMBPASSWD", "ISC_PASSWORD", "SQLCMDPASSWORD", "IPMI_PASSWORD",
    "KRB5_PASSWORD", "PGPASSFILE_CONTENT", "MONGODB_PASSWORD", "MINIO_SECRET_KEY", "SNMP_AUTH_PASSWORD",
)
# A variable named for a secret: the name ends in the noun (`ansible_become_pass`, `POSTGRES_PASSWORD`,
# `slack_bot_token`, `AWS_SECRET_ACCESS_KEY`); `…_key` only with a qualifier in front.
SECRET_NAME = re.compile(
    r"[A-Za-z][A-Za-z0-9]*(?:[_.-][A-Za-z0-9]+)*?[_.-]?(?:password|passwd|pass|pwd|passphrase|secret|token"
    r"|(?:api|secret|access|private|master|auth|signing|encryption|client|app|account|storage|shared)[_.-]?key"
    r"|psk|credentials?)",
    re.IGNORECASE,
)
# Values that say how a secret is given, not what it is.
_NOT_VALUE = re.compile(
    r"(?:true|false|yes|no|none|null|nil|empty|prompt|required|optional|disabled?|enabled?|on|off|auto|ask"
    r"|stdin|env|file|keyring|vault|secret|redacted|hidden|masked|unset|default|changeme_placeholder)",
    re.IGNORECASE)
# Placeholder words a manual writes where the reader's own password goes.
_PLACEHOLDER_WORDS = re.compile(
    r"(?:(?:your|my|the|new|old|user|admin|root|db|some|a)?[-_ ]?(?:password|passwd|passphrase|pass|pw|pwd"
    r"|secret|token|apikey|api[-_]key|key|credentials?)(?:[-_ ]?(?:here|goes|value))?|xxx+|\.\.\.+|foo|bar|baz"
    r"|example|sample|test|dummy|hunter2|s3cr3t|changeme|\*+)",
    re.IGNORECASE)

# A shell word: single-quoted, double-quoted or bare.
_WORD = re.compile(r"'(?P<sq>[^'\n]*)'|\"(?P<dq>(?:[^\"\\\n]|\\.)*)\"|(?P<bare>[^\s'\"`;|&<>()]+)")
# A command ends at a shell separator, a line end, a markdown code span's end, or `, ` in prose.
_COMMAND_END = re.compile(r"[;|&\n`'\"]|, |$")


def placeholder(value: str) -> bool:
    """Documentation, a variable or a way of giving the secret, not the secret."""
    v = value.strip()
    return (len(v) < 3 or is_placeholder(v) or v.startswith(("$", "`", "-", "%", "@")) or "$(" in v
            or "${" in v or bool(_PLACEHOLDER_WORDS.fullmatch(v)) or bool(_NOT_VALUE.fullmatch(v))
            or (v.upper() == v and v.isalpha() and len(v) > 3 and v.lower() in {"password", "passwd", "secret",
                                                                              "token", "pass", "passphrase"}))


@dataclass(frozen=True)
class Found:
    start: int
    end: int
    why: str      # "option:<program> <option>", "env:<NAME>", "variable", "netrc", "expect", "k8s-secret", ...


def _words(text: str, pos: int, end: int) -> Iterator[tuple[int, int, str]]:
    """(value start, value end, value) of each shell word in text[pos:end]. A flag with a quoted
    value attached (`-p'pw'`, `--password="pw"`) is two words here; `_attached` joins them back."""
    for m in _WORD.finditer(text, pos, end):
        group = next(g for g in ("sq", "dq", "bare") if m.group(g) is not None)
        yield m.start(group), m.end(group), m.group(group)


def _attached(text: str, words: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """`-p` + `'pw'` written together: one word `-ppw` whose value offsets are the quoted part's."""
    out: list[tuple[int, int, str]] = []
    for w in words:
        if out and w[0] - 1 == out[-1][1] and text[w[0] - 1] in "'\"" and out[-1][2].startswith("-") \
                and text[out[-1][1]:w[0]] in ("'", '"'):
            prev = out.pop()
            # Offsets: the value part keeps its own place; callers slice by the flag's length.
            out.append((w[0] - len(prev[2]), w[1], prev[2] + w[2]))
            continue
        out.append(w)
    return out


@cache
def _automaton(words: tuple[str, ...]) -> ahocorasick_rs.AhoCorasick:
    return ahocorasick_rs.AhoCorasick(list(words), matchkind=ahocorasick_rs.MatchKind.LeftmostLongest)


def _whole_words(text: str, words: tuple[str, ...], joiners: str = "_.-") -> Iterator[tuple[str, int, int]]:
    """Each of `words` in `text` standing alone (a path in front is allowed: `/usr/bin/ldapsearch`)."""
    if not text.isascii():
        text = _SURROGATE.sub("\ufffd", text)
    for i, s, e in _automaton(words).find_matches_as_indexes(text):
        before = text[s - 1] if s else " "
        after = text[e] if e < len(text) else " "
        if not (before.isalnum() or before in joiners) and not (after.isalnum() or after in joiners):
            yield words[i], s, e
_SURROGATE = re.compile("[\ud800-\udfff]")
_PROGRAM_NAMES = tuple(sorted(PROGRAMS, key=len, reverse=True))
_FORM_SPLIT = {"user:secret": ":", "user%secret": "%", "user,secret": ","}


def _split_form(form: Form, start: int, value: str) -> tuple[int, str] | None:
    if form == "secret":
        return start, value
    if form == "pass:":
        return (start + 5, value[5:]) if value.startswith("pass:") else None
    at = value.find(_FORM_SPLIT[form])
    return (start + at + 1, value[at + 1:]) if at > 0 else None


def _command_end(text: str, pos: int) -> int:
    """Where the command that continues at `pos` ends: `;`, `|`, `&`, or a line end without `\\`."""
    while True:
        m = _COMMAND_END.search(text, pos)
        assert m is not None
        if m.group(0) in ("'", '"'):   # a quoted word: separators inside it do not end the command
            line_end = text.find("\n", m.end())
            close = text.find(m.group(0), m.end(), len(text) if line_end < 0 else line_end)
            pos = m.end() if close < 0 else close + 1
            continue
        if m.group(0) == "\n" and text[max(0, m.start() - 1)] == "\\":
            pos = m.end()
            continue
        return m.start()


def options(text: str) -> Iterator[Found]:
    """Every secret given to a program of the table, in every spelling its options take."""
    for program, _, pend in _whole_words(text, _PROGRAM_NAMES):
        end = _command_end(text, pend)
        words = _attached(text, list(_words(text, pend, end)))
        specs = PROGRAMS[program]
        yield from _option_values(program, specs, words)
        yield from _positional_values(program, specs, words)
    for m in FROM_LITERAL.finditer(text):
        if not placeholder(m.group("value")):
            yield Found(m.start("value"), m.end("value"), "option:kubectl --from-literal")


def _option_values(program: str, specs: tuple[Option | Positional, ...],
                   words: list[tuple[int, int, str]]) -> Iterator[Found]:
    for i, (start, _, word) in enumerate(words):
        for spec in specs:
            if not isinstance(spec, Option):
                continue
            for flag in spec.spellings:
                got: tuple[int, str] | None = None
                if word == flag and spec.spaced and i + 1 < len(words):
                    got = (words[i + 1][0], words[i + 1][2])
                elif spec.equals and word.startswith(flag + "=") and flag.startswith("-"):
                    got = (start + len(flag) + 1, word[len(flag) + 1:])
                elif spec.attached and len(word) > len(flag) and word.startswith(flag) and (
                        flag.endswith(":") or (len(flag) == 2 and flag[0] == "-")):
                    got = (start + len(flag), word[len(flag):])
                if got is None:
                    continue
                split = _split_form(spec.form, *got)
                if split is not None and not placeholder(split[1]):
                    yield Found(split[0], split[0] + len(split[1]), f"option:{program} {flag}")


def _positional_values(program: str, specs: tuple[Option | Positional, ...],
                       words: list[tuple[int, int, str]]) -> Iterator[Found]:
    for spec in specs:
        if not isinstance(spec, Positional):
            continue
        flags = "".join(w[1:] for _, _, w in words if w.startswith("-") and not w.startswith("--"))
        if spec.when_flag and spec.when_flag not in flags:
            continue
        index = spec.index - (1 if spec.minus_if_flag and spec.minus_if_flag in flags else 0)
        after = 0
        if spec.after:
            after = next((i + 1 for i, (_, _, w) in enumerate(words) if w == spec.after), -1)
            if after < 0:
                continue
        plain = [w for w in words[after:] if not w[2].startswith("-")]
        if index < len(plain):
            start, end, value = plain[index]
            if not placeholder(value):
                yield Found(start, end, f"option:{program} {spec.after or 'argument'} {spec.index + 1}")


_ENV_NEEDLES = tuple(v + "=" for v in ENV_VARS)
# `name = value`, `name: value`, `name=value`; the value one shell or YAML word.
_ASSIGN = re.compile(r"(?<![A-Za-z0-9_.-])(?P<name>" + SECRET_NAME.pattern + r")[\"']?[ \t]*(?P<sep>:=|=|:)[ \t]*")
# Lower-cased text is searched for the noun first: `re` skips ahead to a literal, not to a class.
_NOUNS = ("pass", "pwd", "secret", "token", "key", "psk", "credential")
_ASSIGN_ANY = re.compile(r"(?:password|passwd|pass|pwd|passphrase|secret|token|key|psk|credentials?)"
                         r"(?![a-z0-9])[\"']?[ \t]*(?::=|=|:)[ \t]*")


_NAME_CHARS = re.compile(r"[a-z0-9_.-]{0,60}$")


def _name_start(lowered: str, noun_start: int) -> int:
    m = _NAME_CHARS.search(lowered, max(0, noun_start - 60), noun_start)
    start = m.start() if m else noun_start
    while start < noun_start and not lowered[start].isalpha():
        start += 1
    return start


def variables(text: str) -> Iterator[Found]:
    """An environment variable a program reads, or any variable named for a secret, set to a value."""
    for i, s, e in _automaton(_ENV_NEEDLES).find_matches_as_indexes(
            text if text.isascii() else _SURROGATE.sub("\ufffd", text)):
        if s and (text[s - 1].isalnum() or text[s - 1] == "_"):
            continue
        word = next(_words(text, e, _command_end(text, e)), None)
        if word is not None and word[0] <= e + 1 and not placeholder(word[2]):
            yield Found(word[0], word[1], f"env:{ENV_VARS[i]}")
    lowered = text.lower()
    if len(lowered) != len(text) or not any(n in lowered for n in _NOUNS):
        if len(lowered) == len(text):
            return
        lowered = text
    for m in (_ASSIGN_ANY if lowered is not text else _ignorecase(_ASSIGN_ANY)).finditer(lowered):
        name_start = _name_start(lowered, m.start())
        if not SECRET_NAME.fullmatch(lowered, name_start, m.start() + len(m.group(0).split("=")[0].split(":")[0]
                                                                             .rstrip("\"' \t"))):
            continue
        end = text.find("\n", m.end())
        word = next(_words(text, m.end(), len(text) if end < 0 else end), None)
        if word is None or word[0] > m.end() + 1:
            continue
        start, stop, value = word
        value = value.rstrip(",;")
        if (value.startswith(("/", "~/", "./", "http://", "https://", "{", "[")) or placeholder(value)
                or (value.isdigit() and len(value) < 6)):
            continue
        yield Found(start, start + len(value), "variable")


_NETRC = re.compile(r"(?<![\w-])(?:machine|default)(?![\w-])")
_NETRC_PASSWORD = re.compile(r"(?<![\w-])(?:password|passwd)[ \t]+(?P<value>\S+)")
_NETRC_ENTRY = re.compile(r"(?:machine[ \t]+\S+|default)(?:\s+(?:login|account|port)\s+\S+)*\s+")
_EXPECT_PROMPT = re.compile(r"expect\b[^\n]*(?:assword|asswort|ennwort|assphrase|asscode|pin|token|secret"
                            r"|mot de passe|contrase|senha|wachtwoord|hasło|пароль|密码)", re.IGNORECASE)
_SEND = re.compile(r"(?<![\w-])send(?:[ \t]+--)?[ \t]+\"(?P<value>[^\"\n]*?)(?:\\r|\\n)+\"")
_CHPASSWD = re.compile(r"(?<![\w:])[a-z_][a-z0-9_.-]{0,31}:(?P<value>[^\s:'\"|]{3,})")


def scripts(text: str) -> Iterator[Found]:
    """`.netrc` lines, an expect script's `send` after a password prompt, `chpasswd` input."""
    if "machine" in text and "password" in text and _NETRC.search(text):
        for m in _NETRC_PASSWORD.finditer(text):
            # Only inside an entry: `machine HOST` (or `default`), then netrc's own `keyword value` pairs.
            head = max(text.rfind("machine", max(0, m.start() - 300), m.start()),
                       text.rfind("default", max(0, m.start() - 300), m.start()))
            if head >= 0 and _NETRC_ENTRY.fullmatch(text, head, m.start()) and not placeholder(m.group("value")):
                yield Found(m.start("value"), m.end("value"), "netrc")
    if "send" in text and "expect" in text:
        for m in _SEND.finditer(text):
            before = text[max(0, text.rfind("\n", 0, max(0, m.start() - 200))):m.start()]
            value = m.group("value")
            if _EXPECT_PROMPT.search(before) and not placeholder(value):
                yield Found(m.start("value"), m.start("value") + len(value), "expect")
    at = text.find("chpasswd")
    while at >= 0:
        ls, le = text.rfind("\n", 0, at) + 1, text.find("\n", at)
        le = len(text) if le < 0 else le
        at = text.find("chpasswd", le)
        for m in _CHPASSWD.finditer(text, ls, le):
            if not placeholder(m.group("value")):
                yield Found(m.start("value"), m.end("value"), "chpasswd")


_K8S_SECRET = re.compile(r"^[ \t]*kind:[ \t]*[\"']?Secret[\"']?[ \t]*$", re.MULTILINE)
_DATA_KEY = re.compile(r"^(?P<indent>[ \t]*)(?:stringData|data):[ \t]*$", re.MULTILINE)
_ENTRY = re.compile(r"(?P<indent>[ \t]+)[\"']?[\w.-]+[\"']?:[ \t]*(?P<q>[\"']?)"
                    r"(?P<value>[^\s\"'#][^\"'\n#]*?)(?P=q)[ \t]*$")


def kubernetes_secrets(text: str) -> Iterator[Found]:
    """Every value under `data:` (base64) or `stringData:` of a manifest holding `kind: Secret`."""
    if not _K8S_SECRET.search(text):
        return
    for block in _DATA_KEY.finditer(text):
        outer = len(block.group("indent").expandtabs())
        pos = block.end() + 1
        while pos < len(text):
            end = text.find("\n", pos)
            end = len(text) if end < 0 else end
            line = text[pos:end]
            if line.strip():
                m = _ENTRY.fullmatch(line)
                if m is None or len(m.group("indent").expandtabs()) <= outer:
                    break
                value = m.group("value")
                if value not in ("|", ">", "|-", ">-") and not placeholder(value):
                    yield Found(pos + m.start("value"), pos + m.end("value"), "k8s-secret")
            pos = end + 1


@cache
def _ignorecase(p: re.Pattern[str]) -> re.Pattern[str]:
    return re.compile(p.pattern, re.IGNORECASE)


def find(text: str) -> list[Found]:
    """Everything this module knows to be a secret by how it is given, in text order."""
    found = [*options(text), *variables(text), *scripts(text), *kubernetes_secrets(text)]
    return sorted(found, key=lambda f: (f.start, -f.end))
