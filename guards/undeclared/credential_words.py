"""The words that tell the undeclared-secret detector (guards/undeclared/detect.py) a value is a credential:
labels in several languages, vendor names, key-id shapes and the identifier shapes that are never one.

Vendors: the services gitleaks' default config (config/gitleaks.toml, whose generic rules read
"<vendor> … = <value>") and trufflehog's detectors know, by the word a note uses for them. A vendor
word on the same line as a random value is what `the datadog api key <32 hex>` has.
"""

from __future__ import annotations

import re

# A credential label, in the languages engineers' notes are written in. Lower case; matched on word
# boundaries (`pass` is not `passage`), `_`/`-` joined spellings included (`api_key`, `WLAN-Schlüssel`).
LABELS = (
    # English
    "password", "passwd", "passphrase", "passcode", "pass", "pwd", "pw", "secret", "token", "api key", "apikey",
    "api-key", "api_key", "access key", "secret key", "secret_key", "client secret", "client_secret",
    "credentials", "credential", "creds", "pin", "psk", "pre-shared key", "wpa key", "wpa2 key", "wifi key",
    "wi-fi key", "auth key", "auth token", "bearer", "private key", "master key", "app password", "license key",
    "signing key", "session key", "bot token", "webhook secret", "recovery code", "backup code",
    # German
    "passwort", "kennwort", "schlüssel", "schluessel", "wlan-schlüssel", "wlan-schluessel", "netzwerkschlüssel",
    "zugangsdaten", "zugangscode", "geheimnis", "geheimwort",
    # French
    "mot de passe", "mdp", "clé", "clé api", "clef", "code secret", "jeton",
    # Spanish, Portuguese, Italian, Catalan
    "contraseña", "contrasena", "clave", "senha", "palavra-passe", "chave", "segredo", "parola d'ordine",
    "chiave", "contrasenya",
    # Dutch, Nordic
    "wachtwoord", "sleutel", "lösenord", "losenord", "nyckel", "adgangskode", "kodeord", "passord", "salasana",
    "avain", "lykilorð",
    # Central/Eastern European
    "hasło", "haslo", "heslo", "klíč", "jelszó", "jelszo", "kulcs", "parola", "parolă", "lozinka", "geslo",
    "slaptažodis", "parole", "salasõna", "пароль", "ключ", "токен", "лозинка", "парола",
    # Greek, Turkish, Middle East, Asia
    "κωδικός", "συνθηματικό", "şifre", "sifre", "parola", "סיסמה", "كلمة المرور", "كلمة السر", "رمز عبور",
    "密码", "密碼", "口令", "密钥", "パスワード", "暗証番号", "鍵", "비밀번호", "암호", "mật khẩu", "รหัสผ่าน",
    "kata sandi", "kata laluan", "sandi", "पासवर्ड",
)
# Words of a setting's name (`PROJECT_SALT`, `SERVER_HMAC`, `DATABASE_DSN`, `DB_CONN`) that say its value is
# secret although no label above names it: a salt or an HMAC key is one, a DSN or connection carries a password.
SETTING_WORDS = ("salt", "pepper", "hmac", "dsn", "conn", "connstr")
# Labels that name something public: a label next to them is not a credential's.
NOT_LABELS = ("public key", "publickey", "public_key", "pubkey", "host key", "key id", "key_id", "keyid",
              "key fingerprint", "fingerprint", "primary key", "foreign key", "sort key", "partition key",
              "token count", "tokens", "api key id", "access key id", "keyring", "keyboard", "keymap",
              "clé publique", "öffentlicher schlüssel", "offentlig nyckel", "公钥")

# Words that name a user, for the user/password conventions (`admin / pw`, a `user` column).
USER_LABELS = ("user", "username", "user name", "login", "account", "benutzer", "benutzername", "nutzer",
               "utilisateur", "identifiant", "usuario", "usuário", "utente", "gebruiker", "användare",
               "bruker", "käyttäjä", "użytkownik", "uživatel", "felhasználó", "пользователь", "логин",
               "kullanıcı", "用户", "用户名", "ユーザー", "사용자", "email", "e-mail")

# Account names that stand for a login on their own: `root:<value>` in a folder name or a line is a pair.
LOGIN_NAMES = frozenset(("root", "admin", "administrator", "ops", "deploy", "operator", "sa", "postgres",
                         "ubuntu", "pi", "ec2-user", "guest", "service", "backup", "jenkins", "ansible"))

VENDORS = (
    "adafruit", "adobe", "airtable", "algolia", "alibaba", "aliyun", "anthropic", "openai", "artifactory",
    "asana", "atlassian", "confluence", "jira", "auth0", "aws", "amazon", "azure", "beamer", "bitbucket",
    "bittrex", "binance", "braintree", "buildkite", "circleci", "clickhouse", "clojars", "cloudflare",
    "cloudinary", "codecov", "cohere", "coinbase", "confluent", "contentful", "databricks", "datadog", "ddog",
    "digitalocean", "discord", "docker", "doppler", "dropbox", "dynatrace", "easypost", "elastic", "etsy",
    "facebook", "fastly", "figma", "finnhub", "firebase", "flickr", "flutterwave", "freshbooks", "gcp",
    "google", "gitea", "github", "gitlab", "gitter", "gocardless", "grafana", "harness", "hashicorp", "heroku",
    "hetzner", "hubspot", "huggingface", "intercom", "jfrog", "kraken", "kucoin", "launchdarkly", "linear",
    "linkedin", "linode", "mailchimp", "mailgun", "mandrill", "mapbox", "mattermost", "messagebird", "meraki",
    "mixpanel", "mongodb", "netlify", "newrelic", "new relic", "nexmo", "vonage", "notion", "npm", "nuget",
    "okta", "opsgenie", "pagerduty", "paypal", "plaid", "planetscale", "plivo", "postman", "prefect",
    "pulumi", "pusher", "pypi", "rapidapi", "razorpay", "rubygems", "salesforce", "scalingo", "segment",
    "sendbird", "sendgrid", "sendinblue", "brevo", "sentry", "shopify", "sidekiq", "slack", "snyk", "sonar",
    "sonarqube", "sourcegraph", "splunk", "square", "squarespace", "stripe", "sumologic", "supabase",
    "telegram", "terraform", "travis", "trello", "twilio", "twitch", "twitter", "typeform", "vault", "vercel",
    "vultr", "yandex", "zendesk", "zoom", "webex", "backblaze", "wasabi", "scaleway", "ovh", "oracle",
    "tencent", "mailjet", "postmark", "sparkpost", "amplitude", "bugsnag", "rollbar", "honeycomb",
    "lightstep", "logdna", "loggly", "papertrail", "grafana cloud", "influxdb", "rabbitmq", "redis", "kafka",
)

# A vendor's public key id, which a secret is written beside (`AKIA… / <secret>`): AWS access key
# ids, Alibaba, Tencent, Google service accounts' client ids, Azure tenant/app ids are UUIDs (not here).
KEY_IDS = re.compile(
    r"(?<![A-Za-z0-9])(?:(?:AKIA|ASIA|AROA|AIDA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}|LTAI[A-Za-z0-9]{12,20}"
    r"|AKID[A-Za-z0-9]{32}|GOOG[A-Z0-9]{20,}|DO[A-Z0-9]{18}|SCW[A-Z0-9]{17})(?![A-Za-z0-9])"
)

# Identifier shapes that survive, whatever their randomness (the test tables hold examples of each).
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
HEX = re.compile(r"(?:0x)?[0-9a-fA-F]+")
# A digest named by its algorithm: `sha256:…` (images, Git LFS), `sha256=…` (pip RECORD), `sha384-…`
# (subresource integrity), `md5:`; the name says it is a checksum.
DIGEST_PREFIX = re.compile(r"(?:sha(?:1|224|256|384|512)|md5|blake2[bs]?|b3|xxh\d*|crc32c?|sha3-\d+)[:=-]",
                           re.IGNORECASE)
ARN = re.compile(r"arn:[a-z0-9-]+:")
# Kubernetes' generated names: a name, the ReplicaSet's pod-template hash, the pod's 5-character suffix.
K8S_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*?-(?:[a-z0-9]{8,10}-)?[bcdfghjklmnpqrstvwxz2456789]{5}")
# Public keys and content ids: `ssh-ed25519 AAAA…`, `ecdsa-sha2-nistp256 AAAA…`, IPFS `Qm…`.
PUBLIC_KEY_WORD = re.compile(r"(?:ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp\d+|sk-(?:ssh|ecdsa)-[\w@.-]+)$")
# LVM's physical volume, volume group and logical volume UUIDs (`pvdisplay`): 6-4-4-4-4-4-6.
LVM_UUID = re.compile(r"[0-9A-Za-z]{6}(?:-[0-9A-Za-z]{4}){5}-[0-9A-Za-z]{6}")
# A relative path that ends in a file name (`antlr4/BufferedTokenStream.py` in a pip RECORD).
FILE_PATH = re.compile(r"(?:[\w.@+-]+/)+[\w@+-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,5}")
IPFS_CID = re.compile(r"Qm[1-9A-HJ-NP-Za-km-z]{44}")
# PEM blocks that hold public material: every line inside one survives.
PUBLIC_BLOCK = re.compile(r"-----BEGIN (?:CERTIFICATE|PUBLIC KEY|RSA PUBLIC KEY|SSH2 PUBLIC KEY|PGP PUBLIC KEY BLOCK"
                          r"|PGP SIGNATURE|PGP SIGNED MESSAGE|X509 CRL|CERTIFICATE REQUEST|NEW CERTIFICATE REQUEST"
                          r"|PKCS7|DH PARAMETERS|EC PARAMETERS|TRUSTED CERTIFICATE)-----"
                          r"[\s\S]*?(?:-----END [A-Z0-9 ]+-----|\Z)")
