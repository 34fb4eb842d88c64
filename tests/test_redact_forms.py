"""Issue 16 §2, text classes: every form of a known value in exported text is hidden (encoded,
shell-quoted, split by markup or invisible characters, wrapped, cut, overlapping another value),
pattern-only password forms on command lines and in prose (many languages), and ordinary prose
that must come out untouched."""

from __future__ import annotations

import json
import shlex
import subprocess

import pytest
from planted import PROSE

from muninn.guards import forms
from muninn.guards.leak_gate import LeakGate
from muninn.guards.mask import mask_bytes, masking_redactor
from muninn.guards.patterns import PatternScanner
from muninn.guards.redact import ENCODINGS, Redactor
from muninn.guards.rules import all_rules

VALUES = {
    "Zq7#kP2x": "short-random",
    "p@ss w0rd with $pace's": "shell-hostile",
    "Xk9-pQ2m_Zr7t!vB3n": "long-mixed",
    "correct horse battery staple": "phrase",
}


@pytest.fixture(scope="module")
def export_redactor() -> Redactor:
    return Redactor(VALUES, patterns=True, encodings=ENCODINGS, views=True)


@pytest.fixture(scope="module")
def gate() -> LeakGate:
    return LeakGate(VALUES)


def _bash(script: str, value: str) -> str:
    return subprocess.run(["bash", "-c", script, "_", value], capture_output=True, text=True, check=True).stdout


SHELL_PRINTERS = {
    "printf %q": 'printf "%q\\n" "$1"',
    "declare -p": 'v=$1; declare -p v',
    "${v@Q}": 'v=$1; echo "${v@Q}"',
    "set": 'v=$1; set | grep "^v="',
}


@pytest.mark.parametrize("value", list(VALUES))
@pytest.mark.parametrize("printer", list(SHELL_PRINTERS))
def test_shell_quoted_forms_as_bash_prints_them(export_redactor: Redactor, gate: LeakGate, value: str,
                                                printer: str) -> None:
    printed = _bash(SHELL_PRINTERS[printer], value)
    out = export_redactor.redact(f"output:\n{printed}").text
    assert value not in out and f"[REDACTED:{VALUES[value]}]" in out, out
    assert gate.scan(printed), printed
    masked = mask_bytes(masking_redactor(VALUES), [printed.encode()]).decode()
    assert f"[REDACTED:{VALUES[value]}]" in masked, masked


@pytest.mark.parametrize("value", list(VALUES))
@pytest.mark.parametrize("encoding", [e for e in ENCODINGS if e != "raw"])
def test_every_form_of_the_table_is_hidden_by_export_and_seen_by_the_gate(
        export_redactor: Redactor, gate: LeakGate, value: str, encoding: str) -> None:
    needles = [f for f, enc in forms.forms_of(value, ENCODINGS).items() if enc == encoding]
    for needle in needles:
        text = f"prefix {needle} suffix"
        out = export_redactor.redact(text).text
        assert needle not in out, (encoding, out)
        assert gate.scan(text), (encoding, needle)


def test_python_quoting_forms_too(export_redactor: Redactor) -> None:
    for value in VALUES:
        for text in (shlex.quote(value), json.dumps({"k": value}), json.dumps(value, ensure_ascii=True)):
            assert value not in export_redactor.redact(text).text


SPLITS = [
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


@pytest.mark.parametrize("value", list(VALUES))
@pytest.mark.parametrize(("how", "split"), SPLITS, ids=[s[0] for s in SPLITS])
def test_split_values_are_hidden_and_mapped_back(export_redactor: Redactor, gate: LeakGate, value: str,
                                                 how: str, split) -> None:
    broken = split(value)
    text = f"Note: the value is {broken} (do not share)."
    out = export_redactor.redact(text)
    assert f"[REDACTED:{VALUES[value]}]" in out.text, (how, out.text)
    assert out.text.startswith("Note: the value is ") and out.text.endswith(" (do not share).")
    # The hit points at the original text, covering every visible piece of the value.
    hit = next(h for h in out.hits if h.secret_id == VALUES[value])
    pieces = forms.normalised(text[hit.start:hit.end])
    assert forms.normalised(value) in pieces
    assert gate.scan(text), how


@pytest.mark.parametrize("value", [v for v in VALUES if not v.replace(" ", "").isalpha()])
def test_a_prefix_kept_by_a_cut_is_hidden(export_redactor: Redactor, value: str) -> None:
    for keep in range(6, len(value)):
        for tail in ("", "…", "...", "\nnext line", " …"):
            text = f"title: {value[:keep]}{tail}"
            out = export_redactor.redact(text).text
            assert value[:keep] not in out, (keep, tail, out)


def test_letters_only_words_are_not_taken_for_a_cut_phrase(export_redactor: Redactor) -> None:
    for text in ("that is correct", "correct horse", "Saddle the horse\nnext", "battery…"):
        assert export_redactor.redact(text).text == text


OVERLAPS = [
    ({"abcdef123XYZ": "a", "XYZ789qrs": "b"}, "x abcdef123XYZ789qrs y"),                # suffix/prefix
    ({"K9zQ7wPx2L": "a", "7wPx2": "b"}, "K9zQ7wPx2L"),                                 # nested
    ({"Aa1Bb2Cc3": "a", "Cc3Dd4Ee5": "b", "Ee5Ff6Gg7": "c"}, "Aa1Bb2Cc3Dd4Ee5Ff6Gg7!"),  # chained
    ({"Qq1Ww2Ee3Rr": "a", "Ww2Ee3Rr4Tt5Yy": "b"}, "Qq1Ww2Ee3Rr4Tt5Yy"),               # second longer
    ({"m0nK3y_b1z": "a", "b1z_z00": "b"}, "`m0nK3y_b1z_z00`"),
]


@pytest.mark.parametrize(("known", "text"), OVERLAPS)
@pytest.mark.parametrize("views", [False, True])
def test_overlapping_values_are_all_hidden(known: dict[str, str], text: str, views: bool) -> None:
    for redactor in (Redactor(known, patterns=False, views=views), masking_redactor(known)):
        out = redactor.redact(text).text
        for value in known:
            for i in range(len(value) - 2):
                assert value[i:i + 3] not in out, (value, out)
    found = {f.secret_id for f in LeakGate(known).scan(text)}
    assert found == set(known.values())


# --- pattern-only forms ---

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
]


@pytest.fixture(scope="module")
def rules_only() -> PatternScanner:
    return PatternScanner(rules=list(all_rules().values()), use_ds=False)


@pytest.mark.parametrize(("text", "secret"), SHELL_CASES + PROSE_CASES)
def test_pattern_only_password_forms(rules_only: PatternScanner, text: str, secret: str) -> None:
    found = [text[s.start:s.end] for s in rules_only.scan(text)]
    assert any(secret in f for f in found), found
    out = Redactor({}, patterns=True).redact(text).text
    assert secret not in out, out


@pytest.mark.parametrize("text", FALSE_POSITIVES + PROSE)
def test_new_rules_leave_ordinary_prose_alone(text: str) -> None:
    new = PatternScanner(rules=[all_rules()["shell-password"], all_rules()["prose-password"]], use_ds=False)
    assert new.scan(text) == [], text


def test_prose_with_every_view_on_is_untouched(export_redactor: Redactor) -> None:
    for text in PROSE + FALSE_POSITIVES:
        assert export_redactor.redact(text).text == Redactor({}, patterns=True).redact(text).text, text
