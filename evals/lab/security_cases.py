"""The case tables of issue 16 §2 (export redaction), shared by the tests
(tests/test_redact_forms.py) and the measurement (`bench_security_export`): one table per class,
grown when a new bypass is found, never shrunk."""

from __future__ import annotations

import random
import string
from collections.abc import Callable

VALUES = {
    "Zq7#kP2x": "short-random",
    "p@ss w0rd with $pace's": "shell-hostile",
    "Xk9-pQ2m_Zr7t!vB3n": "long-mixed",
    "correct horse battery staple": "phrase",
    # Characters the normalised view reads specially (guards/known/forms.py), each in a value: one whose
    # compatibility form the confusables table reads as another ASCII character (full-width `Ｉ`
    # was `l`, `［` was `(`), and escape- or tag-like runs a split breaks (`**-W%**DA…`). Two are the
    # bench's random values that leaked from 94208f4 to the fix.
    "IBPNibFLdNg4": "capital-i",
    "Ab[7]Qz`9Ik": "brackets-backtick",
    "-W%DAdp/CIF6KD YMP/EL4^5": "percent-escape",
    "Rt&amp;9kQ&#73;x": "entity-escape",
    "k9\\x4Fq\\101Zp": "backslash-escape",
    "Zx<b>9q</b>Kp": "tag-like",
}

SYMBOLS = "!#$%&*+-./:=?@^_~'\" "
WORDS = "amber falcon river quartz lantern meadow copper signal harbor pillow".split()


def random_values(n: int, rng: random.Random) -> dict[str, str]:
    """`n` declared values (value -> id): random letters and digits, with symbols, and phrases of
    3–4 words, in turn; the bench draws them with `random.Random(16)`."""
    out: dict[str, str] = {}
    while len(out) < n:
        kind = len(out) % 4
        if kind == 3:
            value = " ".join(rng.sample(WORDS, rng.randint(3, 4)))   # a declared phrase
        else:
            size = rng.choice((6, 8, 12, 24))
            pool = string.ascii_letters + string.digits + (SYMBOLS if kind == 1 else "")
            value = "".join(rng.choice(pool) for _ in range(size - 1)) + rng.choice(string.digits)
        out[value] = f"v{len(out):04d}"
    return out


SHELL_PRINTERS = {
    "printf %q": 'printf "%q\\n" "$1"',
    "declare -p": 'v=$1; declare -p v',
    "${v@Q}": 'v=$1; echo "${v@Q}"',
    "set": 'v=$1; set | grep "^v="',
}


SPLITS: list[tuple[str, Callable[[str], str]]] = [
    ("emphasis", lambda v: f"**{v[:3]}**{v[3:]}"),
    ("italic", lambda v: f"_{v[:4]}_{v[4:]}"),
    ("strike", lambda v: f"{v[:2]}~~{v[2:5]}~~{v[5:]}"),
    ("inline code", lambda v: f"`{v[:3]}`{v[3:]}"),
    ("zero-width space", lambda v: "\u200b".join(v)),
    ("soft hyphen", lambda v: f"{v[:4]}\u00ad{v[4:]}"),
    ("zero-width joiner", lambda v: f"{v[:2]}\u200d{v[2:]}"),
    ("word joiner", lambda v: f"{v[:5]}\u2060{v[5:]}"),
    ("bom inside", lambda v: f"{v[:3]}\ufeff{v[3:]}"),
    ("bidi mark", lambda v: f"{v[:3]}\u200e{v[3:]}"),
    ("wrapped, indented", lambda v: f"{v[:4]}\n    {v[4:]}"),
    ("wrapped in a list item", lambda v: f"- {v[:5]}\n  {v[5:]}"),
    ("full-width", lambda v: "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in v)),
    ("combined", lambda v: f"**`{v[:2]}`**\u200b{v[2:4]}\u00ad\n   {v[4:]}"),
]


OVERLAPS = [
    ({"abcdef123XYZ": "a", "XYZ789qrs": "b"}, "x abcdef123XYZ789qrs y"),                # suffix/prefix
    ({"K9zQ7wPx2L": "a", "7wPx2": "b"}, "K9zQ7wPx2L"),                                 # nested
    ({"Aa1Bb2Cc3": "a", "Cc3Dd4Ee5": "b", "Ee5Ff6Gg7": "c"}, "Aa1Bb2Cc3Dd4Ee5Ff6Gg7!"),  # chained
    ({"Qq1Ww2Ee3Rr": "a", "Ww2Ee3Rr4Tt5Yy": "b"}, "Qq1Ww2Ee3Rr4Tt5Yy"),               # second longer
    ({"m0nK3y_b1z": "a", "b1z_z00": "b"}, "`m0nK3y_b1z_z00`"),
]


SHELL_CASES = [
    ("sshpass -p 'Hunter2!' ssh root@db01", "Hunter2!"),
    ("sshpass -pS3cr3t ssh backup@nas", "S3cr3t"),
    ("sshpass -v -p \"w1ld card\" scp f host:", "w1ld card"),
    ("mysql -uroot -pS3cr3t! app", "S3cr3t!"),
    ("mysqldump -h db -u app --password=Pa55word appdb", "Pa55word"),
    ("mariadb -u root -p'x7!yz' -e 'select 1'", "x7!yz"),
    ("docker login -u bob -p Xyz123abc registry.example.com", "Xyz123abc"),
    ("docker login --password=abc12345 registry.example.com", "abc12345"),
    ("podman login -u me --password hunter22 quay.io", "hunter22"),
    ("redis-cli -h cache -a 'R3dis!pw' ping", "R3dis!pw"),
    ("redis-cli -a rEd1sPw --no-auth-warning info", "rEd1sPw"),
    ("htpasswd -b /etc/nginx/.htpasswd alice S3cret99", "S3cret99"),
    ("htpasswd -bc /etc/nginx/.htpasswd alice Sup3rS3cret", "Sup3rS3cret"),
    ("htpasswd -nb alice S3cret99", "S3cret99"),
    ("PGPASSWORD=pgpw123 psql -h db -U app", "pgpw123"),
    ("MYSQL_PWD='my pw 1' mysql -u root", "my pw 1"),
    ("export REDISCLI_AUTH=r3disAuth", "r3disAuth"),
    ("SSHPASS=abc12345 sshpass -e ssh host", "abc12345"),
    ("curl -u admin:Adm1nPw https://jenkins.example.com/api", "Adm1nPw"),
    ("$ sudo mysql -u root -pR00tPw -e 'show databases'", "R00tPw"),
]
PROSE_CASES = [
    ("the root password was Summer2024!", "Summer2024!"),
    ("The admin password is now Tr0ub4dor&3.", "Tr0ub4dor&3"),
    ("password → Zq7#kP2x", "Zq7#kP2x"),
    ("password -> hunter22", "hunter22"),
    ("the password for root was set to Xy7z9Qa1.", "Xy7z9Qa1"),
    ("wifi password changed to GuestNet2025", "GuestNet2025"),
    ("Passwort: Geheim123", "Geheim123"),
    ("Das Kennwort ist Fr!hling99", "Fr!hling99"),
    ("mot de passe : Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("le mot de passe est Soleil2024", "Soleil2024"),
    ("contraseña: Qw3rty!", "Qw3rty!"),
    ("la contraseña es Verano2024", "Verano2024"),
    ("senha = abc123def", "abc123def"),
    ("wachtwoord: Zomer2024!", "Zomer2024!"),
    ("hasło: Lato2024#", "Lato2024#"),
    ("lösenord: Sommar2024", "Sommar2024"),
    ("пароль: Пароль2024", "Пароль2024"),
    ("パスワード：Xk9pQ2mz", "Xk9pQ2mz"),
    ("パスワードは Xk9pQ2mz です", "Xk9pQ2mz"),
    ("密码：Xk9pQ2mz", "Xk9pQ2mz"),
    ("**Password** → `Qw3rtY8u`", "Qw3rtY8u"),
]
FALSE_POSITIVES = [
    "the password was changed yesterday",
    "password → see vault entry vm-sudo",
    "password → vm-sudo",
    "Passwort: im Tresor",
    "le mot de passe est dans le coffre",
    "la contraseña es secreta",
    "the password was reset in INC-1234 by the on-call",
    "rotate the password -> done",
    "mysql -u root -p mydb",
    "mysql -p",
    "docker login registry.example.com",
    "redis-cli -h cache ping",
    "htpasswd -c /etc/nginx/.htpasswd alice",
    "PGPASSWORD=$PGPASS psql -h db",
    "sshpass -f ~/.pw ssh host",
    "sshpass -p \"$(cat ~/.pw)\" ssh host",
    "curl -u admin https://example.com",
    "the password policy is 12 characters minimum",
    "Password: <your password>",
    "password is ***",
    "パスワードは金庫にあります",
    "the password manager is Bitwarden",
    "passwords on a command line: `sshpass -p`, `mysql -pv`/`--password=`, `docker login -p`, `curl -u user:v`",
]
