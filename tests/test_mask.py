"""Stream masking: real child processes print a secret in pieces, to stderr, encoded, without a newline."""

from __future__ import annotations

import base64
import io
import os
import random
import sys
from urllib.parse import quote

import pytest

from muninn.guards.mask import StreamMasker, mask_bytes, masking_redactor
from muninn.plugins.vault.runner import CommandNotFound, run_masked

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
