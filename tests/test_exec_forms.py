"""Issue 47 §5: the forms a child's output can give the value it was handed, through the real
`muninn secret exec` (a real child, real pipes): UTF-16, base32, reversed, characters grouped or spaced,
every character escaped, zero-width characters or backspaces between them, the value split between
stdout and stderr, and the dumps an agent runs to check a token for a stray newline. Ordinary output in
the same shapes passes unchanged."""

from __future__ import annotations

import base64
import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from muninn.core import config
from muninn.plugins.access.vault import Vault

VALUE = "Pelican-Torch-6610x"
PY = sys.executable
FORMS = {   # name: a shell line run with the value injected as $VPN_PASS
    "UTF-16": "printf %s \"$VPN_PASS\" | iconv -t UTF-16LE",
    "UTF-16 with a BOM": "printf %s \"$VPN_PASS\" | iconv -t UTF-16",
    "base32": "printf %s \"$VPN_PASS\" | base32",
    "reversed": "printf %s \"$VPN_PASS\" | rev",
    "grouped by spaces": f"{PY} -c 'import os; print(\" \".join(os.environ[\"VPN_PASS\"]))'",
    "grouped by dashes": f"{PY} -c 'import os; print(\"-\".join(os.environ[\"VPN_PASS\"]))'",
    "every character as \\u00XX": f"{PY} -c 'import os; print(\"\".join(\"\\\\u%04x\" % ord(c) "
                                  f"for c in os.environ[\"VPN_PASS\"]))'",
    "zero-width between": f"{PY} -c 'import os; print(\"\\u200b\".join(os.environ[\"VPN_PASS\"]))'",
    "backspaces between": f"{PY} -c 'import os; print(\"\\b\".join(os.environ[\"VPN_PASS\"]))'",
    "split between stdout and stderr": "printf %s \"${VPN_PASS:0:9}\"; printf %s \"${VPN_PASS:9}\" >&2; echo",
    "base32, lower case": "printf %s \"$VPN_PASS\" | base32 | tr A-Z a-z",
    "a colour code on every character": f"{PY} -c 'import os; print(\"\".join(\"\\x1b[3%dm%s\" % (i % 7, c) "
                                        f"for i, c in enumerate(os.environ[\"VPN_PASS\"])))'",
    "od -c": "printf '%s\\n' \"$VPN_PASS\" | od -c",
    "xxd": "printf '%s\\n' \"$VPN_PASS\" | xxd",
    "hexdump -C": "printf '%s\\n' \"$VPN_PASS\" | hexdump -C",
}
CONTROLS = {
    "xxd of an ordinary file": "printf 'restart the worker on app01\\n' | xxd",
    "spaced words": "echo 'P e l i c a n  and  T o r c h  are birds and lamps'",
    "the same words, apart": "echo 'Pelican and Torch went to 6610 Main St.'",
    "coloured ordinary output": "printf 'ordinary \\033[31mred\\033[0m text\\n'",
    "base32 of prose": "printf 'ordinary text' | base32",
}


@pytest.fixture
def env(tmp_path: Path, isolated_keyring: Path) -> dict[str, str]:
    (tmp_path / "secrets.yaml").write_text(yaml.safe_dump([{"id": "vpn-pass", "kind": "password", "value": VALUE}]))
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"vault": {"files": ["secrets.yaml"]},
                                   "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"}}))
    Vault.open(config.load(cfg), who="tester").sync()
    return {**os.environ, "MUNINN_CONFIG": str(cfg)}


def _exec(env: dict[str, str], line: str) -> tuple[bytes, bytes]:
    argv = [PY, "-m", "muninn", "secret", "exec", "vpn-pass", "--env", "VPN_PASS", "--", "bash", "-c", line]
    done = subprocess.run(argv, capture_output=True, env=env, timeout=120)    # two pipes: two places
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr


def _shows(out: bytes) -> bool:
    """Whether any spelling of the value survives in the output (decoded every way it was encoded)."""
    seen = out + out.replace(b"\x00", b"") + out.replace(b" ", b"").replace(b"-", b"")
    with contextlib.suppress(ValueError):
        seen += base64.b32decode(out.strip() + b"=" * (-len(out.strip()) % 8))
    plain = VALUE.encode()
    return any(x in seen for x in (plain, plain[::-1], plain.replace(b"-", b""), b"Pelican", b"6610x"))


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_form_of_the_injected_value_is_masked(env: dict[str, str], form: str) -> None:
    out, err = _exec(env, FORMS[form])
    assert not _shows(out) and not _shows(err), (out, err)
    assert b"[REDACTED:vpn-pass]" in out + err


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_ordinary_output_in_the_same_shapes_is_unchanged(env: dict[str, str], name: str) -> None:
    line = CONTROLS[name]
    want = subprocess.run(["bash", "-c", line], capture_output=True, timeout=60).stdout
    out, _ = _exec(env, line)
    assert out == want


def test_the_invisible_view_drops_every_format_character_and_nothing_else() -> None:
    import unicodedata

    from muninn.guards.redact.stream_views import _INVISIBLE

    format_chars = {chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf"} | set("\x00\x08\r")
    dropped = {chr(c) for c in range(0x110000) if _INVISIBLE.fullmatch(chr(c))}
    assert dropped == format_chars
