"""The words notes use for a password, a PIN and a set of recovery codes, in about forty languages, with
the inflections a label takes in a sentence (Swedish `lösenordet`, Turkish `şifresi`, Polish `hasła`,
Greek `κωδικό`), and the words that join a label to its value (`is`, `est`, `ist`, `è`, `är`, `to`, `je`,
`είναι`, `это`, …).

Used by the redactor's prose rules (guards/rules/prose_password.py, recovery_codes.py) and the detector's
label table (credential_words.py). The leak gate keeps a list of its own (guards/gate/gate_undeclared.py):
it must not share the redactor's blind spots.

Every entry is lower case; a regex fragment where an inflection is written as a suffix.
"""

from __future__ import annotations

import re

# Password, passphrase and "secret word" labels. A suffix group is the inflections a label takes.
PASSWORD_WORDS: tuple[str, ...] = (
    # English
    r"passwords?", r"passphrases?", r"pass phrase", r"passcodes?", r"passwd", r"pwd", r"pw",
    # German, Dutch, Afrikaans, Luxembourgish
    r"passw(?:o|ö)rt(?:es|s)?", r"kennw(?:o|ö)rt(?:es|s)?", r"losungswort", r"wachtwoord(?:en)?", r"wagwoord",
    # French, Spanish, Portuguese, Italian, Catalan, Galician, Romanian
    r"mots? de passe", r"mdp", r"phrase secrète", r"phrase de passe", r"contraseñas?", r"contrasenas?",
    r"clave de acceso", r"senhas?", r"palavras?-passe", r"parola d'ordine", r"contrasenyes?", r"contrasenya",
    r"contrasinal", r"parol(?:ă|a|ei|ele)",
    # Nordic
    r"lösenord(?:et|en)?", r"losenord(?:et|en)?", r"lösenfras(?:en)?", r"adgangskode(?:n|r)?",
    r"kodeord(?:et)?", r"passord(?:et)?", r"salasana(?:n|a)?", r"tunnussana", r"lykilorð(?:ið)?",
    # Central and Eastern Europe, Baltic
    r"has(?:ł|l)(?:o|a|em|e)", r"haśle", r"hesl(?:o|a|em|e|u)", r"gesl(?:o|a)", r"lozink(?:a|e|u|om)",
    r"šifr(?:a|e|u|om)", r"jelsz(?:ó|o|ava|avát|avak)", r"slaptažod(?:is|į|žio)", r"slaptazodis",
    r"parol(?:e|i)", r"salasõna", r"parool", r"fjalëkalim(?:i)?",
    # Cyrillic: Russian, Ukrainian, Belarusian, Bulgarian, Serbian, Macedonian, Kazakh
    r"парол(?:ь|я|ем|е|и|ю|ата|а)", r"гасл(?:о|а)", r"лозинк(?:а|е|у)", r"кодовое слово", r"құпиясөз",
    # Greek, Turkish, Azerbaijani, Caucasus
    r"κωδικ(?:ός|ό|ού|οί)", r"συνθηματικ(?:ό|ού)", r"şifre(?:si|niz|m|n)?", r"sifre(?:si|niz)?",
    r"parola(?:sı|si)?", r"şifrə(?:si)?", r"პაროლი", r"գաղտնաբառ",
    # Middle East, South Asia
    r"סיסמ(?:ה|א)", r"הסיסמה", r"كلمة المرور", r"كلمة السر", r"رمز المرور", r"رمز عبور", r"گذرواژه",
    r"پاس ورڈ", r"पासवर्ड", r"कूटशब्द", r"পাসওয়ার্ড", r"கடவுச்சொல்",
    # East and South-East Asia
    r"密码", r"密碼", r"口令", r"パスワード", r"合言葉", r"비밀번호", r"패스워드", r"암호", r"mật khẩu",
    r"รหัสผ่าน", r"kata sandi", r"kata laluan", r"sandi",
    # Others
    r"nenosiri", r"cyfrinair", r"pasahitza", r"pasvorto",
)

# PIN labels: a number that opens something. `pin` is an electronics word too (`GPIO pin 18`), so the
# rule wants 4+ digits after it.
PIN_WORDS: tuple[str, ...] = (
    r"pin", r"pins?[ -]?code", r"pin[ -]?nummer", r"pin[ -]?number", r"geheimzahl", r"code pin", r"code secret",
    r"código pin", r"codigo pin", r"código secreto", r"codice pin", r"pincode(?:n)?", r"pinkod(?:en)?",
    r"pinkode(?:n)?", r"pin[ -]?koodi", r"kod pin", r"kod pin-u", r"pin[ -]?kód", r"пин(?:-код)?",
    r"пін(?:-код)?", r"ПИН", r"κωδικός pin", r"pin kodu", r"暗証番号", r"密码锁", r"비밀번호", r"puk",
    r"door code", r"alarm code", r"gate code", r"entry code", r"keypad code", r"access code", r"safe code",
    r"safe combination", r"türcode", r"tresorcode", r"zugangscode", r"alarmcode",
    r"code d'accès", r"digicode", r"código de acceso", r"codice di accesso", r"toegangscode", r"portkod",
    r"dørkode", r"kod dostępu", r"код доступа",
)

# Recovery, backup and emergency codes (2FA), as a heading over a list of them.
RECOVERY_WORDS: tuple[str, ...] = (
    r"(?:recovery|backup|scratch|one[- ]time|emergency|2fa|mfa|otp|verification|security)[ \t-]+codes?",
    r"notfall-?codes?", r"backup-?codes?", r"sicherungs-?codes?", r"wiederherstellungs-?codes?",
    r"ersatz-?codes?", r"codes? de (?:récupération|secours|sauvegarde)", r"códigos? de (?:recuperación|respaldo"
    r"|seguridad|emergencia|backup|reserva|recuperação)", r"codici di (?:backup|recupero|emergenza)",
    r"herstelcodes?", r"back-?upcodes?", r"reservekoder?", r"reservkoder(?:na)?", r"återställningskoder(?:na)?",
    r"gjenopprettingskoder?", r"varakoodit", r"palautuskoodit", r"kody (?:zapasowe|odzyskiwania|awaryjne)",
    r"záložní kódy", r"obnovovací kódy", r"kódy pro obnovení", r"tartalékkódok", r"helyreállítási kódok",
    r"coduri de (?:rezervă|recuperare)", r"резервные коды", r"коды восстановления", r"резервні коди",
    r"yedek kodlar(?:ı)?", r"kurtarma kodları", r"εφεδρικοί κωδικοί", r"κωδικοί ανάκτησης", r"バックアップコード",
    r"リカバリーコード", r"リカバリコード", r"备用码", r"备份码", r"恢复码", r"備用碼", r"復原碼", r"백업 코드",
    r"복구 코드", r"رموز الاسترداد", r"رموز النسخ الاحتياطي", r"mã dự phòng", r"mã khôi phục", r"kode cadangan",
    r"kode pemulihan",
)

# What joins a label to its value in a sentence: the copulas of the languages above. Longest first.
COPULAS: tuple[str, ...] = (
    "has been set to", "was set to", "is set to", "is now", "set to", "changed to", "reset to", "has been",
    "is", "was", "are", "ist", "war", "lautet", "lautete", "est", "était", "c'est", "es", "era", "é", "è",
    "és", "är", "var", "er", "blev", "jest", "to", "je", "bylo", "byl", "on", "oli", "ir", "yra", "это",
    "—", "є", "це", "е", "είναι", "ήταν", "dir", "olan", "este", "luidt", "adalah", "ialah", "là",
    "คือ", "הוא", "היא", "هي", "هو", "është", "yw", "は", "是", "为", "為", "는", "은",
)
# Copulas that are also common words in another language (English `on`/`to`, Danish `er`): after one, a
# value needs a capital letter in it to count ("the password on web-server-01" names a host).
AMBIGUOUS_COPULAS = frozenset(("on", "to", "er", "var", "es", "ir", "je", "е"))
# Before a label ("v is the password") only the unambiguous ones: `sasl2-bin e la password` is Italian "and".
BEFORE_COPULAS: tuple[str, ...] = ("is", "was", "ist", "war", "est", "était", "c'est", "es", "era", "é", "è",
                                   "är", "jest", "это", "είναι", "este", "adalah", "là", "lautet")


def _alternation(words: tuple[str, ...]) -> str:
    return "|".join(sorted(words, key=len, reverse=True))


PASSWORD = _alternation(PASSWORD_WORDS)
PIN = _alternation(PIN_WORDS)
RECOVERY = re.compile(_alternation(RECOVERY_WORDS))
COPULA = "|".join(re.escape(w) for w in sorted(COPULAS, key=len, reverse=True))
BEFORE_COPULA = "|".join(re.escape(w) for w in sorted(BEFORE_COPULAS, key=len, reverse=True))

# Plain forms for the detector's Aho-Corasick label table (credential_words.LABELS): the entries above
# that are plain words, and their common inflections spelled out.
PLAIN_LABELS: tuple[str, ...] = (
    "lösenordet", "losenordet", "şifresi", "sifresi", "şifreniz", "parolası", "hasła", "hasłem", "hesla",
    "heslem", "gesla", "lozinke", "lozinku", "šifra", "jelszava", "slaptažodį", "пароля", "паролем",
    "паролата", "гасло", "κωδικό", "κωδικού", "κωδικοί", "passordet", "kodeordet", "adgangskoden",
    "salasanan", "wachtwoorden", "contrasenya", "contrasinal", "parool", "fjalëkalimi", "סיסמא", "הסיסמה",
    "گذرواژه", "パスワード", "패스워드", "nenosiri", "cyfrinair", "pasahitza", "pasvorto",
    "geheimzahl", "pincode", "pinkod", "pinkode", "pin-code", "pin-nummer",
)
