"""The audit log and the access log, by class: whatever the caller typed (argument keys, values, tool
names, queries, commands) is scrubbed by value and by pattern before any cap; every record stays one
line whatever characters it holds; `who` is what muninn knows, not what the environment says."""

from __future__ import annotations

import json
import os
import pwd
from pathlib import Path

import pytest

from muninn.plugins.access import access_log
from muninn.plugins.mcp import audit
from muninn.plugins.mcp.redaction import ValueRedactor

KNOWN = "Zq7Xv2Lm9Rt4Kp8Wn3Bf"                             # a vault value: caught by value
PATTERNED = {                                            # in no vault: caught by pattern
    "github": "ghp_R8x2Lq9Zt4Vw7Yp1Bn6Mk3Hs5Jd0Fc2Gx8Qa",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "slack": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
}
SECRETS = {"known": KNOWN, **PATTERNED}
REDACTOR = ValueRedactor({KNOWN: "chat-bot-token"})
SEPARATORS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def _log(tmp_path: Path) -> audit.AuditLog:
    return audit.AuditLog(tmp_path / "audit.jsonl", REDACTOR.scrub_all)


def _record(log: audit.AuditLog, arguments, tool: str = "recall_search", reason: str = "ok") -> None:
    log.record(profile="raven", tool=tool, arguments=arguments, decision="allow", reason=reason, duration_ms=1.0)


def _pieces(secret: str) -> list[str]:
    return [secret, secret[:8], secret[-8:]]


# Where in a call the caller can put a secret: every place is scrubbed.
PLACES = {
    "value": lambda s: ({"query": f"token {s} here"}, "recall_search"),
    "key": lambda s: ({s: "x"}, "recall_search"),
    "key with prefix": lambda s: ({f"api_key={s}": 1}, "recall_search"),
    "nested key": lambda s: ({"items": [{"a": {s: True}}]}, "recall_search"),
    "list value": lambda s: ({"tags": ["x", s]}, "recall_remember"),
    "tool name": lambda s: ({}, f"recall_{s}"),
    "value straddling the cap": lambda s: ({"text": "x" * (audit.MAX_VALUE_CHARS - 6) + f" {s} tail"},
                                           "recall_remember"),
    "value after a long text": lambda s: ({"text": "y " * 5000 + s}, "recall_remember"),
}


@pytest.mark.parametrize("secret", list(SECRETS))
@pytest.mark.parametrize("place", list(PLACES))
def test_audit_scrubs_every_place_by_value_and_pattern(tmp_path: Path, place: str, secret: str) -> None:
    log = _log(tmp_path)
    arguments, tool = PLACES[place](SECRETS[secret])
    _record(log, arguments, tool=tool, reason=f"saw {SECRETS[secret]}")
    log.close()
    raw = (tmp_path / "audit.jsonl").read_text()
    for piece in _pieces(SECRETS[secret]):
        assert piece not in raw, (place, piece, raw[:300])
    (line,) = audit.read(tmp_path / "audit.jsonl")
    assert line["profile"] == "raven"


@pytest.mark.parametrize("sep", SEPARATORS, ids=[f"U+{ord(s[-1]):04X}" for s in SEPARATORS])
@pytest.mark.parametrize("where", ["value", "key", "tool", "reason"])
def test_each_record_stays_one_line(tmp_path: Path, sep: str, where: str) -> None:
    log = _log(tmp_path)
    text = f"before{sep}after"
    for _ in range(3):
        _record(log, {"q": text} if where == "value" else {text: 1} if where == "key" else {},
                tool=text if where == "tool" else "recall_read", reason=text if where == "reason" else "ok")
    log.close()
    raw = (tmp_path / "audit.jsonl").read_text(encoding="utf-8")
    assert len(raw.splitlines()) == 3, raw    # str.splitlines() breaks at every one of SEPARATORS
    lines = audit.read(tmp_path / "audit.jsonl")
    assert len(lines) == 3
    first = lines[0]   # the text itself survives the round trip
    got = {"value": lambda: first["arguments"]["q"], "key": lambda: next(iter(first["arguments"])),
           "tool": lambda: first["tool"], "reason": lambda: first["reason"]}[where]()
    assert got == text


def test_each_line_is_capped(tmp_path: Path) -> None:
    log = _log(tmp_path)
    _record(log, {f"key{i}": "v" * 300 for i in range(200)}, reason="r" * 10_000)
    _record(log, {"ids": [f"id-{i}" for i in range(5000)]})
    log.close()
    raw = (tmp_path / "audit.jsonl").read_bytes().decode()
    for line in raw.split("\n")[:-1]:
        assert len(line) <= audit.MAX_LINE_CHARS + 200
        json.loads(line)


def test_a_lone_surrogate_does_not_break_the_log(tmp_path: Path) -> None:
    log = _log(tmp_path)
    _record(log, {"q": "bad \ud800 char"})
    log.close()
    (line,) = audit.read(tmp_path / "audit.jsonl")
    assert line["arguments"]["q"].startswith("bad ")


@pytest.mark.parametrize("secret", list(SECRETS))
@pytest.mark.parametrize("field", ["query", "command", "refused"])
def test_access_log_scrubs_what_the_caller_typed(tmp_path: Path, secret: str, field: str) -> None:
    access_log.write(tmp_path / "access.jsonl", who="tester", action="access-find", scrub=REDACTOR.scrub_all,
                     **{field: f"find {SECRETS[secret]} please"})
    raw = (tmp_path / "access.jsonl").read_text()
    for piece in _pieces(SECRETS[secret]):
        assert piece not in raw
    assert access_log.read(tmp_path / "access.jsonl")[-1]["who"] == "tester"


@pytest.mark.parametrize("secret", list(PATTERNED))
def test_access_log_scrubs_patterns_without_a_scrubber(tmp_path: Path, secret: str) -> None:
    access_log.write(tmp_path / "access.jsonl", who="tester", action="find", query=f"where is {PATTERNED[secret]}")
    assert PATTERNED[secret] not in (tmp_path / "access.jsonl").read_text()


@pytest.mark.parametrize("variable", ["MUNINN_WHO", "USER", "LOGNAME", "LNAME", "USERNAME"])
def test_who_is_not_taken_from_the_environment(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.setenv(variable, "mallory")
    assert access_log.default_who() == pwd.getpwuid(os.getuid()).pw_name != "mallory"


def test_inventory_find_logs_a_scrubbed_query(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import yaml

    from muninn.core import config
    from muninn.plugins.access.inventory import Inventory

    monkeypatch.setenv("MUNINN_WHO", "mallory")
    (tmp_path / "inventory.yaml").write_text(yaml.safe_dump([{"id": "box", "kind": "host"}]))
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"inventory": {"files": ["inventory.yaml"]}, "home": str(tmp_path / "home")}))
    settings = config.load(cfg)
    Inventory.open(settings, scrub=REDACTOR.scrub_all).find(f"box {KNOWN} {PATTERNED['github']}")
    Inventory.open(settings).find(f"box {PATTERNED['aws']}")
    raw = settings.paths.access_log.read_text()
    assert KNOWN not in raw and PATTERNED["github"] not in raw and PATTERNED["aws"] not in raw
    assert {line["who"] for line in access_log.read(settings.paths.access_log)} == {pwd.getpwuid(os.getuid()).pw_name}
