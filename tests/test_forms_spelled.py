"""Issue 47, known values in spelled-out and stacked forms (own cases, own spellings; the outside bank is
evals/lab/redteam4_cases.py): decimal code points, bit strings, NATO spelling, `xxd -e`, Z85, `rev` of
base64, base64 of base64, a file name read like its text, the halves of a value cut between two places,
and the audit log's old URIs. Each class beside ordinary text that must come out as it went in."""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path

import pytest

from muninn.guards.redact.mask import JointMasker, mask_bytes, masking_redactor
from muninn.guards.redact.redactor import Redactor
from muninn.plugins.mcp import audit

VALUE = "Hx3Wq9-Tz5Kd2Rm8Yc6"
OTHER = "saffron.Kettle.4417"
NATO = {"a": "Alfa", "b": "Bravo", "c": "Charlie", "d": "Delta", "e": "Echo", "f": "Foxtrot", "g": "Golf",
        "h": "Hotel", "i": "India", "j": "Juliet", "k": "Kilo", "l": "Lima", "m": "Mike", "n": "November",
        "o": "Oscar", "p": "Papa", "q": "Quebec", "r": "Romeo", "s": "Sierra", "t": "Tango", "u": "Uniform",
        "v": "Victor", "w": "Whiskey", "x": "X-ray", "y": "Yankee", "z": "Zulu", "0": "zero", "1": "one",
        "2": "two", "3": "tree", "4": "fower", "5": "fife", "6": "six", "7": "seven", "8": "eight", "9": "niner"}
PLAIN = "Qp7Lm2Xv9Rk4Tw8Zb5N"          # letters and digits only: spellable in NATO words


def _bits(data: bytes, lsb: bool = False) -> str:
    return "".join(f"{b:08b}"[::-1] if lsb else f"{b:08b}" for b in data)


def _z85(data: bytes) -> str:
    alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
    data += b"\0" * (-len(data) % 4)
    out = []
    for i in range(0, len(data), 4):
        n = int.from_bytes(data[i:i + 4], "big")
        out.append("".join(alphabet[n // 85 ** k % 85] for k in range(4, -1, -1)))
    return "".join(out)


def _xxd_e(data: bytes) -> str:
    """`xxd -e`: 4-byte little-endian words, four a line, and the ASCII column."""
    lines = []
    for off in range(0, len(data), 16):
        chunk = data[off:off + 16]
        words = " ".join(chunk[i:i + 4][::-1].hex() for i in range(0, len(chunk), 4))
        lines.append(f"{off:08x}: {words:<35}  {chunk.decode('latin-1')}")
    return "\n".join(lines) + "\n"


FORMS = {
    "code points comma-less, tab apart": "ord: " + "\t".join(str(ord(c)) for c in VALUE),
    "code points over two lines": "\n".join((" ".join(str(ord(c)) for c in VALUE[:9]),
                                             " ".join(str(ord(c)) for c in VALUE[9:]))),
    "bits, a byte a cell": "bits: " + " ".join(f"{b:08b}" for b in VALUE.encode()),
    "bits run together, wrapped at 60": "\n".join(_bits(VALUE.encode())[i:i + 60]
                                                  for i in range(0, 8 * len(VALUE), 60)),
    "bits least significant first": _bits(VALUE.encode(), lsb=True),
    "nato title case, hyphen apart": "spelled " + "-".join(NATO[c.lower()] for c in PLAIN),
    "nato upper case, comma apart": ", ".join(NATO[c.lower()].upper() for c in PLAIN),
    "xxd -e words": _xxd_e(VALUE.encode()),
    "z85": "key " + _z85(VALUE.encode()) + " end",
    "base64 reversed": base64.b64encode(VALUE.encode()).decode()[::-1],
    "base64 of base64": base64.b64encode(base64.b64encode(VALUE.encode())).decode(),
    "hex of base64": base64.b64encode(VALUE.encode()).hex(),
    "zlib then base64 reversed": base64.b64encode(zlib.compress(VALUE.encode())).decode()[::-1],
    "0x per byte, no separator": "".join(f"0x{b:02x}" for b in VALUE.encode()),
}
KNOWN = {VALUE: "vpn", OTHER: "wifi", PLAIN: "api"}
CONTROLS = {
    "numbers in prose": "We kept 12 40 75 110 250 and 999 as the thresholds for the alert tiers.",
    "a run of years": "Releases: 2019 2020 2021 2022 2023 2024 2025",
    "netmask in binary": "255.255.255.0 is 11111111 11111111 11111111 00000000, host 00001010 00000000.",
    "a callsign": "Tower, this is November Seven Two Echo Tango Alfa, request taxi.",
    "an ordinary hex dump": "00000000: 7f45 4c46 0201 0100 0000 0000 0000 0000  .ELF............\n",
    "od of a greeting": "0000000 104 101 108 108 111  44  32 119 111 114 108 100  10\n",
    "base64 of a sentence in a tool's JSON": json.dumps({"stdout": base64.b64encode(
        b"The printer on floor two is out of toner again.").decode()}),
    "base64 of a sentence, reversed": base64.b64encode(b"The printer on floor two is out of toner.").decode()[::-1],
}


@pytest.fixture(scope="module")
def export() -> Redactor:
    return Redactor.for_facts(KNOWN)


@pytest.fixture(scope="module")
def masker() -> Redactor:
    return masking_redactor(KNOWN)


def _shows(text: str) -> bool:
    return any(v in text for v in KNOWN)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_export_and_exec_hide_every_spelled_form(export: Redactor, masker: Redactor, name: str) -> None:
    text = f"before\n{FORMS[name]}\nafter"
    out = export.redact(text)
    assert out.secret_ids, (name, out.text)
    masked = mask_bytes(masker, [text.encode()]).decode()
    assert "[REDACTED:" in masked, (name, masked)
    assert masked.startswith("before") and masked.endswith("after")


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_ordinary_text_comes_out_as_it_went_in(export: Redactor, masker: Redactor, name: str) -> None:
    text = CONTROLS[name]
    assert not [h for h in export.redact(text).hits if h.kind == "value"], name
    assert export.redact_dumped(text) == text, name
    assert mask_bytes(masker, [text.encode()]).decode() == text, name


def test_a_name_is_read_like_its_text(export: Redactor) -> None:
    from muninn.nightly.backup.gate import RestoreGate

    gate = object.__new__(RestoreGate)
    gate.redactor = export
    for encoded in (base64.b64encode(VALUE.encode("utf-16-be")).decode(),
                    base64.urlsafe_b64encode(zlib.compress(VALUE.encode())).decode().rstrip("="),
                    "".join(f"0X{b:02X}" for b in VALUE.encode())):
        assert gate.name_values(f"viking://resources/notes/runbooks/{encoded}.md") == {"vpn"}, encoded
    assert gate.name_values("viking://resources/notes/runbooks/2026-12-01-restic-prune.md") == set()


def test_a_value_cut_between_two_places_is_hidden_in_both(export: Redactor) -> None:
    first, second = VALUE[:8], VALUE[8:]
    assert first not in export.redact(f"curl -H 'X-Key: {first}").text
    assert second not in export.redact(f"{second}\nHTTP/1.1 200 OK").text
    assert export.redact("Tango Uniform Victor Whiskey").text == "Tango Uniform Victor Whiskey"


class _Sink:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def flush(self) -> None:
        pass


@pytest.mark.parametrize("split", ["halves, the second first", "every other character"])
def test_a_value_dealt_between_stdout_and_stderr_is_masked(masker: Redactor, split: str) -> None:
    out, err = _Sink(), _Sink()
    joint = JointMasker(masker, [out, err])
    if split.startswith("halves"):
        joint.feed(1, VALUE[len(VALUE) // 2:].encode())
        joint.feed(0, b"x" * 5000)
        joint.feed(0, VALUE[:len(VALUE) // 2].encode())
    else:
        joint.feed(0, VALUE[0::2].encode())
        joint.feed(1, VALUE[1::2].encode())
    joint.finish(0)
    joint.finish(1)
    shown = (out.data + err.data).decode()
    for piece in (VALUE[:len(VALUE) // 2], VALUE[len(VALUE) // 2:], VALUE[0::2], VALUE[1::2]):
        assert piece not in shown, (split, shown)


def test_a_purged_uri_leaves_the_audit_log(tmp_path: Path, export: Redactor) -> None:
    log = tmp_path / "mcp.jsonl"
    old = f"viking://resources/notes/vpn-{VALUE.lower()}.md"
    writer = audit.AuditLog(log, lambda t: t)           # written before the value was known
    writer.record(profile="raven", tool="recall_read", arguments={"uri": old}, decision="allow", reason="",
                  duration_ms=1.0, uri=old)
    writer.record(profile="raven", tool="recall_read", arguments={"uri": "viking://resources/notes/ok.md"},
                  decision="allow", reason="", duration_ms=1.0)
    assert audit.purge_uris(log, [old], lambda: lambda t: export.redact(t).text) == 1
    writer.record(profile="raven", tool="recall_list", arguments={}, decision="allow", reason="", duration_ms=1.0)
    writer.close()
    text = log.read_text()
    assert VALUE.lower() not in text and "ok.md" in text
    assert [json.loads(line)["tool"] for line in text.splitlines()] == ["recall_read", "recall_read", "recall_list"]
    assert log.stat().st_mode & 0o777 == 0o600
