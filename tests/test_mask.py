"""Stream masking: real child processes print a secret in pieces, to stderr, encoded, without a newline."""

from __future__ import annotations

import base64
import io
import json
import os
import random
import sys
from urllib.parse import quote

import pytest

from muninn.guards.redact.mask import StreamMasker, mask_bytes, masking_redactor
from muninn.plugins.access.runner import CommandNotFound, run_masked

SECRET = "sk_live_7Hq2ZpXw9LmN4vB8rT1y"
OTHER = "ghp_Aa1Bb2Cc3Dd4Ee5Ff6Gg7Hh8"
KNOWN = {SECRET: "stripe-key", OTHER: "github-token"}
MARK = "[REDACTED:stripe-key]"


@pytest.fixture(scope="module")
def redactor():
    return masking_redactor(KNOWN)


def child(redactor, code: str, **kw) -> tuple[int, str, str]:
    """Run a python child that writes raw bytes with flushes between pieces (separate pipe reads)."""
    out, err = io.BytesIO(), io.BytesIO()
    env = {**os.environ, "S": SECRET}
    result = run_masked([sys.executable, "-c", "import os, sys, time, base64\n" + code], redactor=redactor,
                        stdout=out, stderr=err, env=env, **kw)
    return result.exit_code, out.getvalue().decode(), err.getvalue().decode()


def test_value_in_pieces_across_reads(redactor) -> None:
    # Each piece is its own write with a pause, so the parent sees them in separate os.read calls.
    code = ("s = os.environ['S']\n"
            "for i in range(0, len(s), 3):\n"
            "    os.write(1, s[i:i+3].encode()); time.sleep(0.02)\n"
            "os.write(1, b' tail\\n')\n")
    rc, out, _ = child(redactor, code)
    assert rc == 0 and out == f"{MARK} tail\n"
    assert SECRET[:6] not in out


def test_stderr_masked_and_exit_code_kept(redactor) -> None:
    rc, out, err = child(redactor, "sys.stderr.write('err ' + os.environ['S'] + '\\n'); sys.exit(7)")
    assert rc == 7 and out == "" and err == f"err {MARK}\n"


def test_no_trailing_newline(redactor) -> None:
    rc, out, _ = child(redactor, "os.write(1, os.environ['S'].encode())")
    assert out == MARK


def test_value_alone_split_at_every_point(redactor) -> None:
    data = f"x{SECRET}y".encode()
    for cut in range(1, len(data)):
        assert mask_bytes(redactor, [data[:cut], data[cut:]]) == f"x{MARK}y".encode()


def test_base64_forms(redactor) -> None:
    code = ("s = os.environ['S'].encode()\n"
            "print(base64.b64encode(s).decode())\n"
            "print(base64.b64encode(b'user:' + s).decode())\n"
            "print(base64.urlsafe_b64encode(b'ab' + s + b'cd').decode())\n")
    _, out, _ = child(redactor, code)
    lines = out.splitlines()
    assert len(lines) == 3 and all(MARK in line for line in lines)
    encoded = base64.b64encode(SECRET.encode()).decode()
    assert encoded[2:-2] not in out


KEY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKjMzEfYyjiWA4R4"   # spans 2 lines


def _core(blob: bytes, lead: int, size: int) -> str:
    """The base64 characters of `blob` that depend only on bytes lead..lead+size (the secret's)."""
    enc = base64.b64encode(blob).decode()
    return enc[-(-lead * 8 // 6) + 1:(lead + size) * 8 // 6 - 1]


@pytest.mark.parametrize("lead", range(6))
@pytest.mark.parametrize(("width", "eol"), [(64, "\\n"), (76, "\\n"), (76, "\\r\\n"), (7, "\\r\\n"), (1, "\\n"),
                                            (1, "\\r\\n")])
def test_base64_wrapped_over_lines_in_pieces(lead: int, width: int, eol: str) -> None:
    """PEM (64 columns), `base64` (76), CRLF, a narrow terminal, one character a line: the break
    can fall anywhere inside the encoded secret, and the child writes in pieces of 7 bytes, so
    breaks land on read boundaries too."""
    # raw + base64 only: the longest needle is then the key's base64, so a CRLF after every character
    # of it spans 3x the longest needle, which is what the hold-back (Redactor.reach) must cover.
    redactor = masking_redactor({SECRET: "stripe-key", KEY: "tls-key"}, ("raw", "base64"))
    out = io.BytesIO()
    code = (f"blob = b'p' * {lead} + os.environ['S'].encode() + b' and ' + os.environ['K'].encode() + b'.'\n"
            f"enc = base64.b64encode(blob).decode()\n"
            f"text = '{eol}'.join(enc[i:i + {width}] for i in range(0, len(enc), {width})) + '{eol}'\n"
            "for i in range(0, len(text), 7):\n"
            "    os.write(1, text[i:i + 7].encode()); time.sleep(0.002)\n")
    env = {**os.environ, "S": SECRET, "K": KEY}
    run_masked([sys.executable, "-c", "import os, time, base64\n" + code], redactor=redactor, stdout=out,
               stderr=io.BytesIO(), env=env)
    text = out.getvalue().decode()
    assert "[REDACTED:stripe-key]" in text and "[REDACTED:tls-key]" in text, text
    blob = b"p" * lead + SECRET.encode() + b" and " + KEY.encode() + b"."
    flat = text.replace("\n", "").replace("\r", "")
    assert _core(blob, lead, len(SECRET)) not in flat
    assert _core(blob, lead + len(SECRET) + 5, len(KEY)) not in flat


@pytest.mark.parametrize("lead", range(4))
def test_hex_plain_upper_and_wrapped_like_xxd(redactor, lead: int) -> None:
    code = (f"s = b'\\x00' * {lead} + os.environ['S'].encode() * 2\n"
            "print(s.hex()); print(s.hex().upper())\n"
            "h = s.hex()\n"
            "print('\\n'.join(h[i:i + 60] for i in range(0, len(h), 60)))\n")
    _, out, _ = child(redactor, code)
    flat = out.replace("\n", "")
    assert SECRET.encode().hex() not in flat.lower() and out.count(MARK) == 6, out


def test_raw_value_split_over_lines_and_multiline_values(redactor) -> None:
    pem = "-----BEGIN KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcN\n-----END KEY-----"
    both = masking_redactor({SECRET: "stripe-key", pem: "pem"})
    data = f"a {SECRET[:9]}\n{SECRET[9:20]}\r\n{SECRET[20:]} b\n{pem}\nend\n".encode()
    for cut in range(1, len(data), 3):
        assert mask_bytes(both, [data[:cut], data[cut:]]) == f"a {MARK} b\n[REDACTED:pem]\nend\n".encode()
    # Lines that only happen to meet are left alone: nothing here is a value.
    plain = b"sk_live_\n7Hq2 other\n"
    assert mask_bytes(redactor, [plain]) == plain


def test_json_escaped_values() -> None:
    value = 'pa"ss\\w0rd-ünï-Zq8uXy3'
    redactor = masking_redactor({value: "db-pass"})
    for dumped in (json.dumps({"pw": value}), json.dumps({"pw": value}, ensure_ascii=False)):
        out = mask_bytes(redactor, [dumped.encode()]).decode()
        assert out == '{"pw": "[REDACTED:db-pass]"}', out


def test_url_encoded_form() -> None:
    value = "p@ss/w0rd+Zq8uXy3&x="
    redactor = masking_redactor({value: "web-pass"})
    out = mask_bytes(redactor, [f"GET /login?pw={quote(value, safe='')} HTTP/1.1".encode()])
    assert out == b"GET /login?pw=[REDACTED:web-pass] HTTP/1.1"


def test_random_chunking_never_leaks(redactor) -> None:
    rng = random.Random(7)
    text = ("log line " * 50 + SECRET + " middle " + OTHER + " ü€ " + SECRET).encode()
    for _ in range(200):
        cuts = sorted(rng.sample(range(1, len(text)), rng.randint(1, 12)))
        chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        out = mask_bytes(redactor, chunks).decode()
        assert SECRET not in out and OTHER not in out
        assert out.count(MARK) == 2 and "[REDACTED:github-token]" in out and " ü€ " in out


def test_binary_output_passes_through(redactor) -> None:
    data = b"\x00\xff\xfe" + SECRET.encode() + b"\x80\x81 end"
    assert mask_bytes(redactor, [data[:5], data[5:]]) == b"\x00\xff\xfe" + MARK.encode() + b"\x80\x81 end"


def test_multibyte_character_split_across_reads(redactor) -> None:
    data = "€uro".encode()
    assert mask_bytes(redactor, [data[:1], data[1:2], data[2:]]) == data


def test_hits_are_ids_never_values(redactor) -> None:
    masker = StreamMasker(redactor)
    masker.feed(SECRET.encode())
    masker.flush()
    assert masker.hits == ["stripe-key"]


def test_missing_binary_is_a_clear_error(redactor) -> None:
    with pytest.raises(CommandNotFound, match="no-such-binary-xyz"):
        run_masked(["no-such-binary-xyz"], redactor=redactor, stdout=io.BytesIO(), stderr=io.BytesIO())


def test_timeout_kills_the_whole_group(redactor) -> None:
    out = io.BytesIO()
    result = run_masked("sleep 30 & echo started; wait", redactor=redactor, stdout=out, stderr=io.BytesIO(),
                        timeout=0.5)
    assert result.timed_out and result.exit_code == 128 + 9 and out.getvalue() == b"started\n"
