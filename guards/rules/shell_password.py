"""Passwords given to a command on its command line, or through the environment variable the tool
reads: `sshpass -p v`, `mysql -pv` / `--password=v`, `docker login -p v`, `redis-cli -a v`,
`htpasswd -b file user v`, `curl -u user:v`, `PGPASSWORD=v psql`, `MYSQL_PWD`, `REDISCLI_AUTH`, `SSHPASS`.

The flag says it is a password, so any value of 3 characters or more that is not a placeholder
(`$PASS`, `"$(cat f)"`, `<pw>`) is redacted; shorter ones are documentation (`mysql -pv`).
`mysql -p` with a space after it prompts (the next word is a database name), so only the
attached `-pv` form counts.
"""

from __future__ import annotations

import re

from muninn.guards.rules import Rule, is_placeholder

# A shell word: single-quoted, double-quoted or bare.
_WORD = r"(?:'(?P<sq>[^'\n]*)'|\"(?P<dq>[^\"\n]*)\"|(?P<bare>[^\s'\"`;|&<>()]+))"
_OPT = r"(?:[ \t]+(?:-{1,2}[\w-]+(?:=\S+)?|\S+))*?"   # other words before the password flag

_PATTERNS = (
    re.compile(r"sshpass(?:[ \t]+-(?:[fdPe][ \t]*\S+|v))*[ \t]+-p[ \t]*" + _WORD),
    re.compile(r"(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump|mysqlimport|mysqlcheck)" + _OPT
               + r"[ \t]+(?:-p(?=[^\s-])|--password=)" + _WORD),
    re.compile(r"(?:docker|podman|nerdctl|buildah|skopeo|helm(?:[ \t]+registry)?)[ \t]+login" + _OPT
               + r"[ \t]+(?:-p|--password)(?:[ \t]+|=)" + _WORD),
    re.compile(r"redis-cli" + _OPT + r"[ \t]+(?:-a|--pass|--askpass-never)(?:[ \t]+|=)" + _WORD),
    # htpasswd -b[other flags] FILE USER PASSWORD, or -nb USER PASSWORD (no file).
    re.compile(r"htpasswd[ \t]+-(?=[a-zA-Z]*b)(?![a-zA-Z]*n)[a-zA-Z]+(?:[ \t]+-\S+)*[ \t]+\S+[ \t]+\S+[ \t]+" + _WORD),
    re.compile(r"htpasswd[ \t]+-(?=[a-zA-Z]*b)(?=[a-zA-Z]*n)[a-zA-Z]+(?:[ \t]+-\S+)*[ \t]+\S+[ \t]+" + _WORD),
    re.compile(r"curl" + _OPT + r"[ \t]+(?:-u|--user|--proxy-user|-U)[ \t]*['\"]?[^\s:'\"]+:" + _WORD),
    re.compile(r"(?:PGPASSWORD|MYSQL_PWD|REDISCLI_AUTH|SSHPASS|RCLONE_CONFIG_PASS|BORG_PASSPHRASE|RESTIC_PASSWORD"
               r"|ANSIBLE_VAULT_PASSWORD|VAULT_TOKEN)=" + _WORD),
)


class ShellPassword(Rule):
    name = "shell-password"
    patterns = _PATTERNS
    triggers = ("sshpass", "mysql", "mariadb", "login", "redis-cli", "htpasswd", "curl", "pgpassword",
                "mysql_pwd", "rediscli_auth", "sshpass=", "rclone_config_pass", "borg_passphrase",
                "restic_password", "ansible_vault_password", "vault_token")
    boundary = True

    def spans(self, text: str, lowered: str | None = None, *, checked: bool = False):
        lowered = text.lower() if lowered is None else lowered
        if not checked and not any(t in lowered for t in self.triggers):
            return
        for pattern in self.patterns:
            for m in pattern.finditer(text):
                if m.start() > 0 and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "_-"):
                    continue
                group = next(g for g in ("sq", "dq", "bare") if m.group(g) is not None)
                start, end = m.span(group)
                value = text[start:end]
                if end - start >= 3 and not is_placeholder(value) and not value.startswith(("$", "`")):
                    yield start, end
