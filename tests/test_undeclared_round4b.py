"""Issue 47 §2, round 4b: undeclared secrets by class, in spellings of our own (not the red-team bank's).

Classes: a password label in any of ~40 languages with a few words between it and the value; the value
before its label; a question and its answer; a PIN in prose; recovery-code lists in other languages;
credential-file lines (`.pgpass`, SNMP communities, `ipsec.secrets`); TSV and HTML tables; a value in a
folder name; MCP outputs and listings. Controls: ordinary text about passwords, PINs, ports and tables
that must come out untouched.
"""

from __future__ import annotations

import base64
import json
from dataclasses import asdict
from pathlib import Path

import pytest

from muninn.guards.redact.redactor import Redactor
from muninn.plugins.mcp.redaction import ValueRedactor


@pytest.fixture(scope="module")
def redactor() -> Redactor:
    return Redactor.for_facts({})


MULTILINGUAL = [
    ("Le mot de passe de la box est « Givre-Salon-2291 ».", "Givre-Salon-2291"),
    ("mot de passe wifi : Chouette8-Pre", "Chouette8-Pre"),
    ("Пароль от почты — Snegir-4410", "Snegir-4410"),
    ("Пароль до сервера: Kalyna-7731", "Kalyna-7731"),
    ("Hasło do routera: Wisla-Krakow-7781", "Wisla-Krakow-7781"),
    ("hasło administratora to Bocian4-Lato", "Bocian4-Lato"),
    ("La password del router è Airone-Sole-3310.", "Airone-Sole-3310"),
    ("Modemin şifresi: Kartal-Dag-4412", "Kartal-Dag-4412"),
    ("Wi-Fi şifreniz: Lale7-Bahar", "Lale7-Bahar"),
    ("Lösenordet till wifi är Lodjur-Fjall-2207", "Lodjur-Fjall-2207"),
    ("Heslo k wifi je Sova-Praha-9921", "Sova-Praha-9921"),
    ("Heslo na router: Kamzik-5531", "Kamzik-5531"),
    ("Ο κωδικός του wifi είναι Thalassa-8813", "Thalassa-8813"),
    ("A wifi jelszava: Duna-Kecske-2231", "Duna-Kecske-2231"),
    ("Parola routerului este Brad-Munte-6614", "Brad-Munte-6614"),
    ("Wlan-salasana on Karhu-Metsa-4419", "Karhu-Metsa-4419"),
    ("Passordet til ruteren er Fjord-Elg-3317", "Fjord-Elg-3317"),
    ("Adgangskoden til routeren er Sild-Hav-6630", "Sild-Hav-6630"),
    ("Het wachtwoord van de router is Tulp-Molen-5501", "Tulp-Molen-5501"),
    ("A senha do roteador é Caju-Praia-4417", "Caju-Praia-4417"),
    ("La contraseña del router es Nube-Sierra-2208", "Nube-Sierra-2208"),
    ("Lozinka za wifi je Galeb-Split-7714", "Galeb-Split-7714"),
    ("Slaptažodis: Gintaras-5521", "Gintaras-5521"),
    ("Паролата за рутера е Rosa-Sofia-8821", "Rosa-Sofia-8821"),
    ("Kata sandi wifi adalah Merak-Bali-2231", "Merak-Bali-2231"),
    ("Mật khẩu wifi là Hoa-Sen-4412", "Hoa-Sen-4412"),
    ("Das Passwort für den Router lautet Eiche-Fuchs-4471", "Eiche-Fuchs-4471"),
    ("Гасло до wifi: Vyshnia-2290", "Vyshnia-2290"),
    ("Geslo za strežnik je Lipa-Bled-3318", "Lipa-Bled-3318"),
    ("Parool on Kuusk-Tallinn-5531", "Kuusk-Tallinn-5531"),
]

VALUE_FIRST = [
    ("Heron-Quay-7719 is the wifi password for the guest network.", "Heron-Quay-7719"),
    ("Granit-Moos-2281 ist das Passwort vom NAS.", "Granit-Moos-2281"),
    ("Brise-Marine-5542 est le mot de passe du wifi.", "Brise-Marine-5542"),
    ("Osprey-Lake-8830 = vpn password", "Osprey-Lake-8830"),
    ("4471 is the PIN for the garage door.", "4471"),
]

QUESTION_ANSWER = [
    ("Q: what is the password for the staging db?\nA: Kestrel-Moor-5511", "Kestrel-Moor-5511"),
    ("what's the wifi password? — Larch-Dune-3321", "Larch-Dune-3321"),
    ("¿Cuál es la contraseña del wifi?\n\nCeiba-Luna-7712", "Ceiba-Luna-7712"),
    ("Wie lautet das Passwort?\n> Ahorn-Bach-6613", "Ahorn-Bach-6613"),
    ("what was the alarm code again?\n\n5590", "5590"),
]

PINS = [
    ("The PIN is 4711.", "4711"),
    ("PIN for the safe: 2209", "2209"),
    ("SIM PIN 8830, PUK elsewhere", "8830"),
    ("Geheimzahl der EC-Karte: 9142", "9142"),
    ("code PIN : 5521", "5521"),
    ("PIN-Code 3390 für das Handy", "3390"),
    ("door code 7781# then push", "7781"),
    ("the alarm code is 4402", "4402"),
    ("Türcode 1973, bitte nicht weitergeben", "1973"),
    ("ПИН-код: 7742", "7742"),
    ("the pin is 6620 for the bike lock", "6620"),
]

RECOVERY = [
    "Kody zapasowe:\n- 9kq2-m7xp\n- 3hz8-w4nd\n",
    "Codes de secours :\n1. 48302917\n2. 59120384\n",
    "Códigos de respaldo\n\n    7x2kq-9m4pd\n    3z8wn-1r5tc\n",
    "Резервные коды:\n* 8421-7730\n* 1093-5528\n",
    "Yedek kodlar:\n- 55k2-9q7z\n- 2m8d-7v4r\n",
    "Varakoodit\n4f7k2-9x3m1\n8d2q7-1z6p4\n",
    "Notfall-Codes (Microsoft):\n- 1840 2295\n- 7731 4460\n",
]

CREDENTIAL_LINES = [
    ("*:5432:*:replicator:Rep1-Kx82-Lm", "Rep1-Kx82-Lm"),
    ("[::1]:5433:app:app:Vx7-Qz2-Wp", "Vx7-Qz2-Wp"),
    ("pg.internal:6432:billing:billing:hunter22-Q", "hunter22-Q"),
    ("snmp-server community N3tw0rkMon RW 10", "N3tw0rkMon"),
    ("rocommunity Mon1t0r-Kx 10.0.0.0/8", "Mon1t0r-Kx"),
    ("rwcommunity Adm1nC0mm", "Adm1nC0mm"),
    ("community=Zx8CommStr", "Zx8CommStr"),
    ("snmp community string: Lab-Snmp-7713", "Lab-Snmp-7713"),
    ("snmpwalk -v2c -c Kq7MonSt 10.1.1.1 ifDescr", "Kq7MonSt"),
    (': PSK "Tunnel-Psk-8812"', "Tunnel-Psk-8812"),
    ('alice : EAP "Eap-Pass-4471"', "Eap-Pass-4471"),
]

TABLES = [
    ("fw01\troot\tQm4Zx8Lw2Kp\nsw02\tadmin\tRb7Ty3Nc9Vd\n", ("Qm4Zx8Lw2Kp", "Rb7Ty3Nc9Vd")),
    ("<table><tr><th>Server</th><th>heslo</th></tr><tr><td>db1</td><td>Jz7Kp2Wq9</td></tr></table>",
     ("Jz7Kp2Wq9",)),
    ("<table>\n<tr><th>Host</th><th>Lösenord</th></tr>\n<tr><td>nas</td><td>Skog-Alg-4471</td></tr>\n</table>",
     ("Skog-Alg-4471",)),
    ("<table><tr><td>Password</td><td>Wq8-Lm3-Zx7</td></tr><tr><td>Port</td><td>8443</td></tr></table>",
     ("Wq8-Lm3-Zx7",)),
    ("<TABLE><TR><TD>ops@example.org</TD><TD>Kx9Lm2Qw7Zr</TD></TR></TABLE>", ("Kx9Lm2Qw7Zr",)),
]

CONTROLS = [
    "Rotate the password yearly; the password policy requires 12 characters and lives in the handbook.",
    "PIN code reset procedure: call the helpdesk, then follow step 3 of the reset guide.",
    "Connect the sensor to GPIO pin 17 and pin 4; pin 2040 stays unused.",
    "| Service | Port |\n|---|---|\n| https | 443 |\n| ssh | 22 |\n",
    "ssh\t22\ttcp\nhttps\t443\ttcp\nsmtp\t25\ttcp\n",
    "<table><tr><th>Service</th><th>Port</th></tr><tr><td>https</td><td>443</td></tr></table>",
    "The password of the NAS is in the vault, ask Anna.",
    "Le mot de passe est dans le coffre, demande à Paul.",
    "Das Passwort steht im Tresor.",
    "What is the password policy? It requires twelve characters.",
    "The PIN must be 4 to 8 digits long.",
    "Version 2.4.1 is the release that changed the password hashing to SHA-512.",
    "snmp-server community public RO",
    "hostname:port:database:username:password",
    "fe80:0:0:0:1 is the link-local address",
    "La password è scaduta: chiedi a Marco di reimpostarla.",
    "Hasło musi mieć co najmniej 12 znaków.",
    "Kody zapasowe są w sejfie.",
    "Backup codes are printed and kept in the safe.",
    "The combination of PIN and card is what the bank checks.",
    "Lösenordet är för kort.",
    "What's the password for? The vault opens with it.",
]


def _redacted(redactor: Redactor, text: str) -> str:
    return redactor.redact(text).text


@pytest.mark.parametrize(("text", "secret"), MULTILINGUAL + VALUE_FIRST + QUESTION_ANSWER + PINS + CREDENTIAL_LINES)
def test_value_is_redacted(redactor: Redactor, text: str, secret: str) -> None:
    assert secret not in _redacted(redactor, text)


@pytest.mark.parametrize("text", RECOVERY)
def test_recovery_codes_in_other_languages(redactor: Redactor, text: str) -> None:
    out = _redacted(redactor, text)
    assert out.count("[REDACTED:") >= 2, out


@pytest.mark.parametrize(("text", "secrets"), TABLES)
def test_tables(redactor: Redactor, text: str, secrets: tuple[str, ...]) -> None:
    out = _redacted(redactor, text)
    assert not [s for s in secrets if s in out], out


@pytest.mark.parametrize("text", CONTROLS)
def test_controls_untouched(redactor: Redactor, text: str) -> None:
    assert _redacted(redactor, text) == text


@pytest.mark.parametrize("sentence", ["Backups run nightly and are verified each morning.",
                                      "Les sauvegardes sont vérifiées chaque matin, puis archivées."])
def test_base64_of_prose_is_not_a_secret(redactor: Redactor, sentence: str) -> None:
    text = json.dumps({"stdout": base64.b64encode(sentence.encode()).decode()})
    assert _redacted(redactor, text) == text


def test_base64_of_a_token_still_is(redactor: Redactor) -> None:
    text = "blob: " + base64.b64encode(bytes(range(7, 250, 7))).decode()
    assert "[REDACTED:" in _redacted(redactor, text)


def test_mcp_output_reads_like_export() -> None:
    scrub = ValueRedactor({})
    out = scrub.scrub_file("Notiz\n\nPasswort für das NAS lautet Eiche-Fuchs-4471.\nSIM PIN 8830\n")
    assert "Eiche-Fuchs-4471" not in out and "8830" not in out
    assert scrub.scrub_file("Rotate the restic key yearly.") == "Rotate the restic key yearly."


def test_mcp_listing_hides_a_token_in_a_name() -> None:
    token = "ghp_" + "Zq8Lm2Kx9Wv4Tn7Rb3Hc6Jd1Fg5Ys0UeA7w"
    scrub = ValueRedactor({})
    shown = scrub.scrub_name(f"viking://resources/raven/notes/{token}.md")
    assert token not in shown and shown.startswith("viking://resources/raven/notes/")
    plain = "viking://resources/raven/notes/backup-runbook.md"
    assert scrub.scrub_name(plain) == plain
    assert "5521" not in scrub.scrub_name("viking://resources/raven/garage pin 5521/door.md")


@pytest.mark.parametrize(("rel", "secret"), [
    ("garage pin 5521/notes.md", "5521"),
    ("accounts/root:Zq8Lm2Kx9/host.md", "Zq8Lm2Kx9"),
    ("safe PIN 8842/inventory.md", "8842"),
    ("wifi passwort Eiche4471Nord/router.md", "Eiche4471Nord"),
])
def test_folder_names_are_read(tmp_path: Path, rel: str, secret: str) -> None:
    from muninn.export import pipeline

    notes, out = tmp_path / "notes", tmp_path / "out"
    (notes / rel).parent.mkdir(parents=True)
    (notes / rel).write_text("# Note\n\nNothing secret in the text.\n")
    report = pipeline.run("notes", notes, out, known={})
    seen = [json.dumps(asdict(report), default=str, ensure_ascii=False)]
    for p in sorted(out.rglob("*")):
        seen.append(str(p.relative_to(out)))
        if p.is_file():
            seen.append(p.read_text(errors="replace"))
    assert secret not in "\n".join(seen)


@pytest.fixture(scope="module")
def gate():
    from muninn.export.pipeline import Guards

    return Guards.from_known({}).gate


@pytest.mark.parametrize("text", CONTROLS)
def test_gate_drops_no_control(gate, text: str) -> None:
    """One false drop refuses a whole sync: the gate's wider cue list flags none of the controls."""
    assert not gate.scan(text)


@pytest.mark.parametrize(("text", "secret"), [
    ("Lösenordet till wifi är Lodjur-Fjall-2207", "Lodjur-Fjall-2207"),
    ("Modemin şifresi: Kartal-Dag-4412", "Kartal-Dag-4412"),
    ("La password del router è Airone-Sole-3310.", "Airone-Sole-3310"),
    ("Hasło do routera: Wisla-Krakow-7781", "Wisla-Krakow-7781"),
])
def test_gate_reads_inflected_labels_alone(gate, text: str, secret: str) -> None:
    """The gate's own cue list (not the redactor's lexicon) reaches the inflected and joined forms too."""
    assert gate.scan(text)


@pytest.mark.parametrize("text", [
    "the password on web-server-01 expired yesterday",
    "Richiede i pacchetti libsasl2-modules e sasl2-bin e la password di sistema.",
    "O Oculto e Criptografo Arquivo de Senhas: /etc/shadow",
    "Community: Debian users meet on Fridays.",
    "# client server secret IP addresses\nvpn pptp Example-Pw1 *\nThe PPTP section ends here.",
])
def test_manual_sentences_untouched(redactor: Redactor, text: str) -> None:
    """Sentences of the Debian manuals the wider lexicon first redacted (measured, then fixed)."""
    assert _redacted(redactor, text) == text
