"""Collect the known secret values that value-based redaction and the leak gate look for.

Sources, chosen by file name:
- `*.yaml` / `*.yml`: secrets YAML (a list of entries, or `secrets: [...]`, see
  muninn.core.secrets_file). `value` is kept under the entry's id; a multi-part secret's `parts: {name: value}` is
  kept under `ID.name`.
- `.env`, `*.env`, `.env.*`: parsed by python-dotenv (quotes, `export`, inline comments,
  multi-line values), id `env:<file name>:KEY`.
- anything else: a plain dump of `name: value` or `name=value` lines, id `dump:<file name>:name`.

Three filters, by how sure we are that a value is a secret:
- declared (secrets YAML): the owner said so. Kept unless it is one ordinary word (`summer`,
  `bluefish`: a hint word that would censor prose) or shorter than 6 characters; a random-looking
  value of 6+ characters and a phrase of several words are kept (`is_declared_secret`).
- guessed (env files, dumps): only secret-ish values (`is_secretish`), and not addresses
  (`is_locator`: URLs without credentials, host names whose labels read as names, e-mail
  addresses, paths); a six-letter hint word in the known set would redact ordinary sentences,
  which happened to the seed project.
- keyed (Kubernetes Secrets, a repo's `.env` files): the reader chose the rule by each value's key
  (`setting_values`: a `password` key's value passes `is_credential_value`, any other the guessed one),
  so `Collected` applies only the floor.
Counts of skipped values are reported; the values themselves never are.
"""

from __future__ import annotations

import io
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from dotenv import dotenv_values

from muninn.core import registry, yamlfile
from muninn.core.errors import ConfigError
from muninn.guards.undeclared.credential_words import FILE_PATH

if TYPE_CHECKING:
    from muninn.core.config import Settings

MIN_LENGTH = 10
# Random strings have nearly one distinct character per position, so their entropy approaches
# log2(length); words repeat letters. Capped at 4 bits because long random strings over a small
# alphabet (hex, lowercase) cannot exceed log2(alphabet).
ENTROPY_RATIO = 0.95
ENTROPY_CAP = 4.0

_LETTER = re.compile(r"[^\W\d_]")
_DIGIT = re.compile(r"\d")
DECLARED_MIN_LENGTH = 6
# One ordinary word: letters only, capitalised at most at the start or shouted whole.
_ORDINARY_WORD = re.compile(r"[^\W\d_]?[^\W\d_A-Z]*|[^\W\d_a-z]+")
_EMAIL = re.compile(r"^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")
_PATH = re.compile(r"^(?:~|\.{1,2})?/[^\s]*$")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://([^\s:@/?#]*)(?::\d+)?([/?#][^\s]*)?$", re.IGNORECASE)
_HOST = re.compile(r"^([a-z0-9-]+(?:\.[a-z0-9-]+)+)(?::\d+)?$")
# A host label that reads as a name: words with trailing numbers (`db01`, `eu-west-1`, `ec2`).
# `a8f3k2` (letters and digits interleaved) reads as a random value and is kept.
_NAME_LABEL = re.compile(r"^(?:[a-z]+\d*|\d+)(?:-(?:[a-z]+\d*|\d+))*$")
_URL_SEGMENT = re.compile(r"[/?&=#]+")
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_URL_PASSWORD = re.compile(r"://[^\s:@/]*:([^\s@/]+)@")
_DUMP_LINE = re.compile(r"^\s*(?:[-*]\s+)?([^\s:=#][^:=]*?)\s*(?::|=)\s*(.+?)\s*$")


def shannon_entropy(value: str) -> float:
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def is_secretish(value: str) -> bool:
    """≥ 10 characters and (letters mixed with digits, or entropy near that of a random string)."""
    value = value.strip()
    if len(value) < MIN_LENGTH:
        return False
    if _LETTER.search(value) and _DIGIT.search(value):
        return True
    if any(ch.isspace() for ch in value) or not _LETTER.search(value) or is_locator(value):
        # Sentences have high character entropy (a letters-only passphrase is the price); digit
        # runs are account numbers and phone numbers; URLs and host names are addresses.
        return False
    return shannon_entropy(value) >= min(ENTROPY_CAP, ENTROPY_RATIO * math.log2(len(value)))


def is_locator(value: str) -> bool:
    """A URL without credentials or a random-looking path part, a host name whose labels read as
    names, an IP, an e-mail address or a path. Dotted values that only look like hosts
    (`Xk9.pQ2mZ7.rT`, `a8f3k2.b9x7q1.io`) are not addresses."""
    value = value.strip()
    if _EMAIL.match(value) or _PATH.match(value):
        return True
    url = _URL.match(value)
    if url:
        host, rest = url.group(1), url.group(2) or ""
        return (not host or _is_host(host)) and not any(
            is_secretish(seg) for seg in _URL_SEGMENT.split(rest) if seg)
    host = _HOST.match(value)
    return bool(host) and _is_host(host.group(1))


def _is_host(host: str) -> bool:
    return (all(_NAME_LABEL.match(label) for label in host.split(".")) and not host[-1:].isdigit()) \
        or bool(re.fullmatch(r"\d{1,3}(?:\.\d{1,3}){3}", host))


def is_guessed_secret(value: str) -> bool:
    """The one filter for values read from where secrets live but nobody declared (env files, dumps,
    Kubernetes Secrets): secret-ish and not an address."""
    return is_secretish(value) and not is_locator(value)


def is_declared_secret(value: str) -> bool:
    """A value the owner declared secret is kept unless it is short or a single ordinary word."""
    value = value.strip()
    if is_secretish(value):
        return True
    if len(value) < DECLARED_MIN_LENGTH:
        return False
    if len(value.split()) > 1:
        return True   # a phrase, matched as a whole
    return not _ORDINARY_WORD.fullmatch(value)


# A passphrase has a few words; a sentence has more. Prose and markup signs around a word that is not
# random-looking (`VALUE\``), and `=` in a phrase (a list of settings).
PASSPHRASE_WORDS = 5
_MARKUP = re.compile(r"[`|“”«»]")
# One ordinary word this long is a password made of words (`supersecretpassword`), not prose.
LONG_WORD = 16
# A stand-in where the value goes (`${DB_PASSWORD}`, `{{ .pw }}`, `<password>`, `[token]`, `%(pw)s`, `****`).
_PLACEHOLDER = re.compile(r"\$\{[^}]*\}|\$[A-Za-z_]\w*|\{\{.*\}\}|<[^<>]+>|\[[^\[\]]+\]|%\(\w+\)s|(.)\1*")


def is_credential_value(value: str, *, embedded: bool = False) -> bool:
    """The rule for a value in a slot that names a credential (a `password` key, a URL's password, a
    `pwd=` part): the slot says secret, so the declared rule applies, not the guessed one (`hunter2x`,
    `Tr0ub4dor` and passphrases are kept). One ordinary word (a trailing full stop or comma included:
    `authentication.`) is kept only when longer than the words prose uses (`supersecretpassword`);
    `changeme` or `bluefish` would censor prose. `embedded`: the password part of a URL or connection
    string, a slot that never holds prose, where a word as long as a guessed secret is kept (`secretpass`).
    A phrase of many words, or one with markup or `=` in
    it, is a sentence or a list of settings, not a passphrase. Stand-ins and addresses are not secrets."""
    value = value.strip()
    if len(value) < DECLARED_MIN_LENGTH or _PLACEHOLDER.fullmatch(value) or is_locator(value) \
            or FILE_PATH.fullmatch(value):
        return False
    if is_secretish(value) and not any(ch.isspace() for ch in value):
        return True
    if _MARKUP.search(value):
        return False
    phrase = value.split()
    if len(phrase) > 1:
        return len(phrase) <= PASSPHRASE_WORDS and "=" not in value
    word = value.rstrip(".,;:!?")
    return not _ORDINARY_WORD.fullmatch(word) or len(word) >= (MIN_LENGTH if embedded else LONG_WORD)


@dataclass
class Collected:
    """value -> secret id, plus how many candidates were skipped (never which)."""

    values: dict[str, str] = field(default_factory=dict, repr=False)  # a logged report must not leak them
    skipped: int = 0
    files: int = 0

    def add(self, value: str, secret_id: str, *, declared: bool = False, keyed: bool = False) -> None:
        """`keyed`: a reader already filtered the value by the key it was read under (`setting_values`),
        so only the floor of every rule applies here."""
        if keyed:
            keep = len(value.strip()) >= DECLARED_MIN_LENGTH
        elif declared:
            keep = is_declared_secret(value)
        else:
            keep = is_guessed_secret(value)
        if not keep:
            self.skipped += 1
            return
        self.values.setdefault(value, secret_id)
        creds = _URL_PASSWORD.search(value)
        if creds and is_credential_value(creds.group(1), embedded=True):
            # A DSN's password is pasted on its own too (a `psql` prompt, a console login).
            self.values.setdefault(creds.group(1), f"{secret_id}.password")
        if "\n" in value:
            # A multi-line value (a PEM key) is often re-indented where it is pasted: each long
            # line is a needle of its own.
            for line in value.splitlines():
                line = line.strip()
                if is_secretish(line) and not line.startswith("-----"):
                    self.values.setdefault(line, secret_id)


def known(settings: Settings, extra: Iterable[Path] = (), *, stores: bool = True) -> dict[str, str]:
    """The one collector of known values, {value: secret id}, that export, the leak gates (export, sync,
    nightly, the server scan) and MCP redaction all use: every file of `known_secret_files(extra)`, then
    every registered source (`registry.known_value_stores`: the vault, whose values `muninn secret add`
    put there exist in no file; the Kubernetes Secrets cache; repo `.env` files). A declared source's
    values pass the declared rule (≥ 6 characters, not one ordinary word), the others the guessed-value
    filter. `stores=False`: the files alone (the MCP server's start with a damaged vault)."""
    out = collect_report(settings.paths.known_secret_files(extra))
    if stores:
        for source in registry.known_value_stores():
            for secret_id, value in source.values(settings):
                out.add(value, secret_id, declared=source.declared, keyed=source.keyed)
    return out.values


def retired(settings: Settings) -> set[str]:
    """The known values that are only retired (`KnownValues.retired`): `known` redacts them like any
    other; the server leak scan reports a hit as a retired value."""
    return {v for source in registry.known_value_stores() if source.retired is not None
            for v in source.retired(settings)}


def refresh(settings: Settings) -> list[str]:
    """Read every live source of known values into its cache (export calls this before `known`);
    warnings for sources that could not be read, whose cached values stay in use."""
    warnings: list[str] = []
    for source in registry.known_value_stores():
        if source.refresh is not None:
            warnings += source.refresh(settings)
    return warnings


def guessed(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """{value: secret id} of (secret id, value) pairs read from where secrets live, through the
    guessed-value filter (a source's own `.env` files at export)."""
    out = Collected()
    for secret_id, value in pairs:
        out.add(value, secret_id)
    return out.values


def keyed(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """{value: secret id} of pairs a reader already filtered by the key they were read under
    (`setting_values.setting_values`: Kubernetes Secrets, a repo's `.env` files)."""
    out = Collected()
    for secret_id, value in pairs:
        out.add(value, secret_id, keyed=True)
    return out.values


def collect(files: Iterable[Path]) -> dict[str, str]:
    """Map every secret-ish known value in `files` to its secret id."""
    return collect_report(files).values


def collect_report(files: Iterable[Path]) -> Collected:
    out = Collected()
    for path in files:
        path = Path(path)
        out.files += 1
        kind = source_kind(path)
        if kind == "yaml":
            _from_yaml(path, out)
        else:
            text = _read(path)
            _from_lines(path, text, out, env=kind == "env")
    return out


def source_kind(path: Path) -> str:
    name = path.name.lower()
    if path.suffix.lower() in (".yaml", ".yml"):
        return "yaml"
    if name == ".env" or name.endswith(".env") or name.startswith(".env."):
        return "env"
    return "dump"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("secrets file not found", path=str(path)) from None
    except UnicodeDecodeError:
        raise ConfigError("secrets file is not UTF-8 text", path=str(path)) from None


class _Invalid(Exception):
    def __init__(self, loc: tuple[str | int, ...], message: str, fix: str | None = None) -> None:
        self.loc, self.message, self.fix = loc, message, fix


def _from_yaml(path: Path, out: Collected) -> None:
    """Parse with libyaml when present (10,000 entries: ~1 s instead of ~10 s for the pure-Python
    parse that also records line numbers); only a bad file is parsed again, with lines, to say where."""
    text = _read(path)
    try:
        data = yaml.load(text, Loader=_FAST_LOADER)
    except yaml.YAMLError:
        yamlfile.parse(text, path)  # raises the ConfigError with file and line
        raise
    found = Collected()
    try:
        _entries(data, found)
    except _Invalid as bad:
        raise yamlfile.parse(text, path).error_at(bad.loc, bad.message, fix=bad.fix) from None
    for value, secret_id in found.values.items():
        out.values.setdefault(value, secret_id)
    out.skipped += found.skipped


def _entries(data: Any, out: Collected) -> None:
    base: tuple[str | int, ...] = ()
    if isinstance(data, dict) and "secrets" in data:
        data, base = data["secrets"], ("secrets",)
    if data is None:
        return
    if not isinstance(data, list):
        raise _Invalid(base, "expected a list of secret entries",
                       fix="write `- id: ...` entries, or put them under `secrets:`")
    for i, entry in enumerate(data):
        loc = (*base, i)
        if not isinstance(entry, dict):
            raise _Invalid(loc, "a secret entry must be a mapping with at least `id`")
        secret_id = entry.get("id")
        if not isinstance(secret_id, str) or not secret_id:
            raise _Invalid((*loc, "id"), "every secret entry needs a string `id`")
        if "value" in entry and entry["value"] is not None:
            out.add(_scalar((*loc, "value"), entry["value"]), secret_id, declared=True)
        parts = entry.get("parts")
        if parts is None:
            continue
        if not isinstance(parts, dict):
            raise _Invalid((*loc, "parts"), "`parts` must map part names to values")
        for name, value in parts.items():
            out.add(_scalar((*loc, "parts", name), value), f"{secret_id}.{name}", declared=True)


def _scalar(loc: tuple[str | int, ...], value: Any) -> str:
    if isinstance(value, str):
        return value
    # YAML turns 0123456789 into an int and drops the zero; redacting the wrong string is worse
    # than refusing.
    raise _Invalid(loc, f"a secret value must be a string (got {type(value).__name__})", fix="quote the value")


def _from_lines(path: Path, text: str, out: Collected, *, env: bool) -> None:
    # Env files and dumps mix secrets with plain settings (hosts, URLs, paths): redacting
    # those would hide every mention of a host from search, hence the guessed-value filter.
    for secret_id, value in text_values(text, path.name, env=env):
        out.add(value, secret_id)


def text_values(text: str, name: str, *, env: bool) -> list[tuple[str, str]]:
    """(id, value) candidates of an env file's text (`env:NAME:KEY`) or of a dump's `name: value` /
    `name=value` lines (`dump:NAME:name`), unfiltered: `Collected.add` filters."""
    if env:
        return [(f"env:{name}:{key}", value)
                for key, value in dotenv_values(stream=io.StringIO(text), interpolate=False).items() if value]
    out: list[tuple[str, str]] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith(("#", "//", ";")):
            continue
        m = _DUMP_LINE.match(line)
        if m:
            out.append((f"dump:{name}:{m.group(1).strip().strip(chr(34) + chr(39))}", _unquote(m.group(2))))
    return out


def _unquote(value: str) -> str:
    value = value.strip()
    if value[:1] in ("'", '"') and (end := value.find(value[0], 1)) > 0:
        # What follows the closing quote is an inline comment or a JSON line's comma.
        return value[1:end]
    # An unquoted value ends at an inline comment.
    return re.split(r"\s+(?:#|//)", value, maxsplit=1)[0]
