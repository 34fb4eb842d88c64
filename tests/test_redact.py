"""Redaction by value and by pattern, through the real detect-secrets and ahocorasick-rs."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import quote

import pytest
from planted import FORMS, PROSE, SHORT_HINTS, VALUE_ONLY_FORMS, generate, known_values, write_secrets_yaml

from muninn.core.errors import ConfigError
from muninn.guards.known import secret_values
from muninn.guards.known.secret_values import collect, is_secretish
from muninn.guards.redact.patterns import PatternScanner, _detector
from muninn.guards.redact.redactor import ENCODINGS, Redactor
from muninn.guards.rules import all_rules
from muninn.guards.undeclared.detect import RULE

PLANTED = generate(n=320, seed=11)


@pytest.fixture(scope="module")
def full() -> Redactor:
    return Redactor(known_values(PLANTED))


@pytest.fixture(scope="module")
def patterns_only() -> Redactor:
    return Redactor({})


def test_planted_corpus_is_big_and_varied() -> None:
    assert len({p.value for p in PLANTED}) == len(PLANTED) >= 300
    assert len({p.form for p in PLANTED}) == len(FORMS) >= 12
    assert all(is_secretish(p.value) for p in PLANTED)


def test_collect_reads_back_every_planted_value(tmp_path: Path) -> None:
    known = collect([write_secrets_yaml(PLANTED, tmp_path / "secrets.yaml")])
    assert {known[p.value] for p in PLANTED} == {p.secret_id for p in PLANTED}


@pytest.mark.parametrize("form", list(FORMS))
def test_no_planted_value_survives(full: Redactor, form: str) -> None:
    for p in (p for p in PLANTED if p.form == form):
        out = full.redact(p.doc)
        for needle in p.needles:
            assert needle not in out.text, (p.secret_id, form)
        assert f"[REDACTED:{p.secret_id}]" in out.text
        assert full.redact(out.text).text == out.text, "redaction must be idempotent"


@pytest.mark.parametrize("form", sorted(set(FORMS) - VALUE_ONLY_FORMS))
def test_patterns_alone_catch_labelled_forms(patterns_only: Redactor, form: str) -> None:
    for p in (p for p in PLANTED if p.form == form):
        out = patterns_only.redact(p.doc)
        assert p.value not in out.text, (p.secret_id, form)
        assert all(h.kind == "pattern" for h in out.hits)


@pytest.mark.parametrize("form", sorted(VALUE_ONLY_FORMS))
def test_bare_values_need_the_value_pass(full: Redactor, form: str) -> None:
    """The seed project's second leak: a bare value in a table. The labelled patterns cannot see it;
    the undeclared-secret detector sees the random-looking ones (tests/test_undeclared.py), the value
    pass every one."""
    labelled_only = Redactor({}, scanner=PatternScanner([r for r in all_rules().values() if r.name != RULE]))
    docs = [p for p in PLANTED if p.form == form]
    assert any(p.value in labelled_only.redact(p.doc).text for p in docs)
    assert not any(p.value in full.redact(p.doc).text for p in docs)


def test_hits_name_ids_and_point_at_the_input(full: Redactor) -> None:
    for p in PLANTED[:60]:
        out = full.redact(p.doc)
        value_hits = [h for h in out.hits if h.kind == "value"]
        assert [h.secret_id for h in value_hits] == [p.secret_id]
        h = value_hits[0]
        assert p.doc[h.start:h.end] == p.value
        assert p.value not in repr(out.hits)


@pytest.mark.parametrize("text", PROSE)
def test_prose_is_untouched(tmp_path: Path, text: str) -> None:
    secrets = tmp_path / "hints.yaml"
    secrets.write_text("".join(f"- id: hint-{h}\n  value: {h}\n" for h in SHORT_HINTS))
    redactor = Redactor.from_files([secrets])
    assert len(redactor) == 0, "short hint words are not secret-ish"
    out = redactor.redact(text)
    assert out.text == text, out.hits


@pytest.mark.parametrize(("payload", "should_redact"), [
    ("API key: Zx81kLmQ2pRt7uVw9YbC3dEf", True),
    ("api key = Zx81kLmQ2pRt7uVw9YbC3dEf", True),
    ("Api-Key => 'Zx81kLmQ2pRt7uVw9YbC3dEf'", True),
    ("**Password:** Qw3rtY8uI0pAs", True),
    ("**Password**: Qw3rtY8uI0pAs", True),
    ("| Password | `Qw3rtY8uI0pAs` |", True),
    ("the sudo password is Qw3rtY8uI0pAs", True),
    ("| **API key** | Zx81kLmQ2pRt7uVw9YbC3dEf |", True),
    ("- Slack bot token: xoxq-not-a-prefix-Zx81kLmQ2", True),
    ("apikey=Zx81kLmQ2pRt7uVw9YbC3dEf", True),
    ("SLACK_BOT_TOKEN='Zx81kLmQ2pRt7uVw9YbC3dEf'", True),
    ("<password>Qw3rtY8uI0pAs</password>", True),
    # Random enough to need no label: the undeclared-secret detector (tests/test_undeclared.py).
    ("the key -> Zx81kLmQ2pRt7uVw9YbC3dEf", True),
    ("monkey: Zx81kLmQ2pRt7uVw9YbC3dEf", True),
    ("the key -> Zx81kLmQ2", False),
    ("DB_PASSWORD=Qw3rtY8uI0pAs", True),
    ('"client_secret": "Zx81kLmQ2pRt7uVw9YbC3dEf"', True),
    ("Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l", True),
    ("-H 'X-API-Key: Zx81kLmQ2pRt7uVw9YbC3dEf'", True),
    ("redis://:S3cretPassw0rd@cache:6379/0", True),
    ("https://deploy:S3cretPassw0rd@git.example.com/repo.git", True),
    ("AKIAIOSFODNN7EXAMPLQ", True),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", True),
    ("key=AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", True),
    ("ya29.a0AfH6SMBx1y2z3AbCdEfGhIjKlMnOp", True),
    ("DefaultEndpointsProtocol=https;AccountName=x;AccountKey=" + "Ab12" * 22 + "==", True),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", True),
    ("https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX", True),
    ("rk_live_51Habcdefghijklmnop", True),
    ("glpat-abcdefghij0123456789", True),
    ("password: rotated yearly", False),
    ("token: expires", False),
    ("the bearer of this letter", False),
    ("Basic authentication is disabled", False),
    ("password: $DB_PASSWORD", False),
    ("api key: <your key here>", False),
    ("postgres://app:${DB_PASS}@db:5432/app", False),
    ("primary key: user_id_2", False),
    ("https://example.com/path?page=2", False),
])
def test_pattern_table(patterns_only: Redactor, payload: str, should_redact: bool) -> None:
    out = patterns_only.redact(payload)
    assert bool(out.hits) is should_redact, out.text
    assert patterns_only.redact(out.text).text == out.text


@pytest.mark.parametrize("token", ["glrt-abcdefghij0123456789", "ghp_" + "aB3" * 12, "glpat-abcdefghij0123456789"])
def test_detect_secrets_prefix_only_findings_cover_the_whole_token(token: str) -> None:
    """GitHubTokenDetector and GitLabTokenDetector report only their capture group (`ghp`)."""
    ds_only = Redactor({}, scanner=PatternScanner(rules=[]))
    out = ds_only.redact(f"token {token} end")
    assert token[6:] not in out.text and out.text.endswith(" end"), out.text


def test_url_credentials_keep_user_and_host(patterns_only: Redactor) -> None:
    out = patterns_only.redact("psql postgres://app_rw:S3cretPassw0rd@db-01.internal:5432/app")
    assert out.text == "psql postgres://app_rw:[REDACTED:url-credentials]@db-01.internal:5432/app"


def test_pem_block_is_redacted_whole_even_reindented(full: Redactor) -> None:
    pem = next(p for p in PLANTED if p.form == "pem")
    indented = "key: |\n" + "\n".join("    " + line for line in pem.value.splitlines()) + "\n"
    out = full.redact(indented)
    assert all(needle not in out.text for needle in pem.needles)
    unknown = Redactor({}).redact(pem.value + "\ntrailing prose\n")
    assert unknown.text == "[REDACTED:private-key]\ntrailing prose\n"
    body = pem.value.splitlines()[1:-1]
    truncated = Redactor({}).redact("\n".join([pem.value.splitlines()[0], *body[:3]]) + "\nthen some prose here\n")
    assert truncated.text == "[REDACTED:private-key]\nthen some prose here\n"


def test_non_ascii_text_keeps_offsets() -> None:
    r = Redactor({"Zx81kLmQ2pRt7uVw9YbC3dEf": "tok"}, patterns=False)
    text = "übergröße → Zx81kLmQ2pRt7uVw9YbC3dEf ✓ Zx81kLmQ2pRt7uVw9YbC3dEf"
    out = r.redact(text)
    assert out.text == "übergröße → [REDACTED:tok] ✓ [REDACTED:tok]"
    assert [text[h.start:h.end] for h in out.hits] == ["Zx81kLmQ2pRt7uVw9YbC3dEf"] * 2


def test_leftmost_longest_wins() -> None:
    r = Redactor({"abc123def456": "short", "abc123def456ghi789": "long"}, patterns=False)
    assert r.redact("x abc123def456ghi789 y").text == "x [REDACTED:long] y"


@pytest.mark.parametrize("align", [0, 1, 2])
def test_base64_forms_at_every_alignment(align: int) -> None:
    value = "Zx81kLmQ2pRt7uVw9YbC3dEf"
    r = Redactor({value: "tok"}, patterns=False, encodings=ENCODINGS)
    blob = base64.b64encode(b"user=" [:align] + value.encode() + b";rest").decode()
    out = r.redact(f"log: {blob} end")
    assert [h.rule for h in out.hits] == ["base64"]
    assert base64.b64encode(value.encode()).decode()[4:-4] not in out.text


def test_url_encoded_form() -> None:
    value = "S3cret/Passw0rd+x=="
    r = Redactor({value: "pw"}, patterns=False, encodings=ENCODINGS)
    out = r.redact(f"GET /login?pw={quote(value, safe='')}&x=1")
    assert out.text == "GET /login?pw=[REDACTED:pw]&x=1"
    assert out.hits[0].rule == "url"


def test_a_value_wrapped_over_lines_in_a_note_is_redacted_with_exact_offsets() -> None:
    """The exporter's and the MCP server's pass, not only stream masking: a value someone pasted
    broken over lines (a narrow terminal, a PEM-style block) is redacted whole."""
    value = "Zx81kLmQ2pRt7uVw9YbC3dEf"
    r = Redactor({value: "tok"}, patterns=False)
    text = f"ünï token:\n  {value[:8]}\n{value[8:16]}\r\n{value[16:]}\nnext line\n"
    out = r.redact(text)
    assert out.text == "ünï token:\n  [REDACTED:tok]\nnext line\n"
    [hit] = out.hits
    assert text[hit.start:hit.end].replace("\n", "").replace("\r", "") == value
    assert r.contains_known(text) == ["tok"] and r.contains_known("Zx81kLmQ\nnothing") == []
    # A value stored with its own line breaks is still matched as it stands.
    pem = "-----BEGIN-----\nabcDEF123ghiJKL456\n-----END-----"
    assert Redactor({pem: "pem"}, patterns=False).redact(f"x\n{pem}\ny").text == "x\n[REDACTED:pem]\ny"


def test_hex_and_json_escaped_forms() -> None:
    value = 'Zx81"kLmQ\\2pRt-ü'
    r = Redactor({value: "tok"}, patterns=False, encodings=ENCODINGS)
    assert r.redact(f"h={value.encode().hex()} H={value.encode().hex().upper()}").text == \
        "h=[REDACTED:tok] H=[REDACTED:tok]"
    for dumped in (json.dumps({"v": value}), json.dumps({"v": value}, ensure_ascii=False)):
        assert r.redact(dumped).text == '{"v": "[REDACTED:tok]"}'


def test_contains_known_names_ids_only(full: Redactor) -> None:
    p = PLANTED[3]
    assert full.contains_known(p.doc) == [p.secret_id]
    assert full.contains_known(PROSE[0]) == []


# One line per detect-secrets plugin (shapes from its own regexes), to pin the trigger tables.
DS_SAMPLES = [
    'artifactory = "AKCp5e2gMx8ofRkMEuLwVbKsG4cFD8zQJ8zYsM3NsFbXqgBCBFEHpEC4fPMVqhi9UPYGSqhXa"',
    "key=AP6xxxxxxxxxxxxxxx1",
    "AKIAIOSFODNN7EXAMPLQ",
    'aws_secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
    "AccountKey=" + "lJzRc1YdHaAA2KCNJJ1tkYwF/+mKK6Ygw0NGe170Xu592euJv2wYUtBlV8z+qnlcNQSnIYVTkLWntUO1F8j8rQ==",
    "http://admin:hunter2X9@example.com",
    'cloudant_password = "' + "a" * 24 + '"',
    "MTk4NjIyNDgzNDcOTY3NDUxMg.G8EmVh.bmT4SL56fHJmsZfgCnfM1xGUMCwWqKCzlNj2Qd",
    "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",
    "glpat-abcdefghij0123456789",
    'ibm_cloud_iam_key = "' + "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH" + '"',
    'ibm_cos_secret_access_key = "' + "a1b2c3d4" * 6 + '"',
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    'secret = "Zx81kLmQ2pRt7uVw9YbC3dEf"',
    "0123456789abcdef0123456789abcdef-us12",
    "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnop",
    "sk-abcdefghij0123456789T3BlbkFJabcdefghij0123456789",
    "-----BEGIN RSA PRIVATE KEY-----",
    "pypi-AgEIcHlwaS5vcmc" + "A" * 70,
    "SG." + "a" * 22 + "." + "b" * 43,
    "xoxb-123456789012-abcdefghij",
    'softlayer_api_key = "' + "a1" * 32 + '"',
    "sq0csp-" + "A1b2C3d4E5" * 4 + "abc",
    "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "123456789:" + "AAE" + "abcdefghijklmnopqrstuvwxyz01234567"[:32],
    "AC" + "0123456789abcdef" * 2,
    'commit = "3f2a9c1d4e5b6a7c8d9e0f1a"',
    # KeywordDetector needs a quote on markdown lines (the trigger relies on it): with and without.
    "password: `Qw3rtY8uI0pAs`",
    "the api_key is 'abc123def456' for now",
    'db_pass == "Qw3rtY8uI0pAs"',
    "password: Qw3rtY8uI0pAs",
]


def test_every_detect_secrets_plugin_has_a_trigger() -> None:
    """A detect-secrets upgrade that adds a plugin must be noticed: it would run on every line."""
    assert _detector().unmapped == []


def test_trigger_prefilter_finds_what_a_full_scan_finds() -> None:
    """The cheap per-line trigger must never hide a detect-secrets finding."""
    fast, slow = PatternScanner(prefilter=True), PatternScanner(prefilter=False)
    assert sum(bool(slow.scan(line)) for line in DS_SAMPLES) >= len(DS_SAMPLES) - 3
    docs = [p.doc for p in PLANTED[:120]] + PROSE + DS_SAMPLES + ["\n".join(DS_SAMPLES)]
    for doc in docs:
        assert fast.scan(doc) == slow.scan(doc), doc


@pytest.mark.parametrize(("value", "secretish"), [
    ("bluefish", False), ("correcthorse", False), ("administrator", False), ("kubernetes-admin", False),
    ("the usual one", False), ("https://jira.example.com", False), ("123456789012", False), ("hunter2hunter2", True),
    ("Zx81kLmQ2pRt7uVw9YbC3dEf", True), ("Kx!vQ#pLm&zR", True), ("qwhzkfpmvxtr", True),
    ("0123456789", False), ("aaaaaaaaaaaaaaaa", False),
])
def test_is_secretish(value: str, secretish: bool) -> None:
    assert is_secretish(value) is secretish


def test_collect_sources(tmp_path: Path) -> None:
    (tmp_path / "secrets.yaml").write_text(
        "secrets:\n"
        "  - id: jira-api-token\n    service: jira\n    value: Zx81kLmQ2pRt7uVw9YbC3dEf\n"
        "  - id: vm-sudo\n    hint: bluefish\n    value: bluefish\n"
        "  - id: s3\n    parts:\n      access_key: AKIAIOSFODNN7EXAMPLQ\n      secret_key: wJalrXUtnFEMI/K7MDENG\n"
        "  - id: metadata-only\n    service: grafana\n")
    (tmp_path / ".env").write_text(
        "# local\nexport DB_PASSWORD='S3cretPassw0rd'\nDB_HOST=db01.internal.example.com\n"
        "API_URL=https://api2.example.com/v1\nTOKEN=abc123def456ghi # rotated\nDEBUG=1\n"
        "DATABASE_URL=postgres://app:Pg5ecretW0rd@db:5432/app\n")
    (tmp_path / "dump.txt").write_text("grafana: Gr4fanaAdminPw99\nnote = short\n")
    report = secret_values.collect_report([tmp_path / "secrets.yaml", tmp_path / ".env", tmp_path / "dump.txt"])
    assert report.values == {
        "Zx81kLmQ2pRt7uVw9YbC3dEf": "jira-api-token",
        "AKIAIOSFODNN7EXAMPLQ": "s3.access_key",
        "wJalrXUtnFEMI/K7MDENG": "s3.secret_key",
        "S3cretPassw0rd": "env:.env:DB_PASSWORD",
        "abc123def456ghi": "env:.env:TOKEN",
        "Gr4fanaAdminPw99": "dump:dump.txt:grafana",
        "postgres://app:Pg5ecretW0rd@db:5432/app": "env:.env:DATABASE_URL",
        "Pg5ecretW0rd": "env:.env:DATABASE_URL.password",
    }
    assert report.skipped == 5   # bluefish, a host, a URL, "1", "short"
    assert not any(v in repr(report) for v in report.values)


@pytest.mark.parametrize(("text", "line", "needle"), [
    ("- id: a\n  value: x: y\n", 2, "not valid YAML"),
    ("- id: a\n  value: 12345678901\n", 2, "quote the value"),
    ("- service: x\n  value: abc\n", 1, "id"),
    ("just: a mapping\n", 1, "list of secret entries"),
    ("- id: a\n  parts: [x, y]\n", 2, "parts"),
])
def test_malformed_yaml_names_file_and_line(tmp_path: Path, text: str, line: int, needle: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        collect([path])
    assert err.value.path == str(path) and err.value.line == line
    assert needle in str(err.value)


def test_idempotent_on_random_mixtures(full: Redactor) -> None:
    import random

    rng = random.Random(5)
    pool = [p.doc for p in PLANTED] + PROSE + DS_SAMPLES
    for _ in range(60):
        text = "\n".join(rng.sample(pool, rng.randint(2, 8)))
        once = full.redact(text).text
        assert full.redact(once).text == once


def test_length_changing_lowercase_still_redacts(patterns_only: Redactor) -> None:
    """'İ'.lower() is two characters: the lower-cased offsets no longer line up with the text."""
    text = "İİİ notes — API key: Zx81kLmQ2pRt7uVw9YbC3dEf and ghp_" + "aB3" * 12
    out = patterns_only.redact(text)
    assert "Zx81kLmQ2pRt7uVw9YbC3dEf" not in out.text and "ghp_aB3" not in out.text
    assert out.text.startswith("İİİ notes — API key: [REDACTED:")


def test_undecodable_bytes_pass_through_the_value_pass() -> None:
    r = Redactor({"Zx81kLmQ2pRt7uVw9YbC3dEf": "tok"}, patterns=False)
    text = (b"\xff\xfe raw Zx81kLmQ2pRt7uVw9YbC3dEf \x80").decode("utf-8", "surrogateescape")
    out = r.redact(text)
    assert out.text.encode("utf-8", "surrogateescape") == b"\xff\xfe raw [REDACTED:tok] \x80"


def test_long_single_line_json_is_scanned_in_windows_without_losing_secrets() -> None:
    """detect-secrets sees long lines in overlapping windows (its filters are quadratic per line);
    a quoted secret straddling where a naive cut would fall must still be found."""
    import random
    import string

    from muninn.guards.redact.patterns import _MAX_LINE

    rng = random.Random(9)
    alphabet = string.ascii_letters + string.digits
    secrets = ["".join(rng.choice(alphabet) for _ in range(64)) for _ in range(12)]  # entropy > 4.5
    parts: list[str] = []
    size = 0
    for k, secret in enumerate(secrets, start=1):
        target = k * _MAX_LINE - 30 - rng.randint(0, 20)
        while size < target:
            filler = f'{{"n": {rng.randint(0, 999)}}}, '
            parts.append(filler)
            size += len(filler)
        parts.append(f'{{"blob": "{secret}"}}, ')
        size += len(parts[-1])
    line = "[" + "".join(parts) + "{}]"
    ds_only = Redactor({}, scanner=PatternScanner(rules=[]))
    out = ds_only.redact(line)
    assert [s for s in secrets if s in out.text] == []


def test_lone_surrogates_do_not_break_the_pattern_pass(full: Redactor) -> None:
    """Output decoded with surrogateescape reaches the redactor too (MCP results, masked logs)."""
    p = next(p for p in PLANTED if p.form == "api-key-space")
    text = (b"\xff junk\n").decode("utf-8", "surrogateescape") + p.doc + "API key: Zx81kLmQ2pRt7uVw9YbC3dEf\n"
    out = full.redact(text)
    assert p.value not in out.text and "Zx81kLmQ2pRt7uVw9YbC3dEf" not in out.text
    assert out.text.startswith("\udcff junk\n")
