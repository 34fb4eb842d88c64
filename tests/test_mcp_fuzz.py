"""Every argument of every tool, pushed to its bound and past it (large, deep, many), through the real
MCP server over stdio with the SDK's client. Each call must be answered or refused with a sentence, and
the date reader's work (real dateparser calls, counted in the server process) stays within its bound.
No case asserts a time: the work is counted, not clocked."""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from mcp import Client, StdioServerParameters

from muninn.core import accounts, credentials
from muninn.core import config as muninn_config
from muninn.guards.dates import check as dates
from muninn.plugins.mcp import registry

pytestmark = pytest.mark.integration

TOOLS = list(registry.all_tools())
# A sentence, not an exception's class name: what server.call says for a failure that is a bug.
CRASH = re.compile(r"^failed: [A-Za-z_.]*(?:Error|Exception|Exit|Interrupt)\b")
DEPTH = 200
EXTRA_KEYS = 2000


def _date_text(size: int, salt: int = 0) -> str:
    """Distinct dates with a month name (each one a parser call if read), up to `size` characters."""
    months = ["January", "March", "mars", "März", "marzo", "maart", "junho"]
    words, n = [], salt
    while sum(len(w) + 1 for w in words) < size:
        words.append(f"{n % 28 + 1} {months[n % len(months)]} {1990 + n // 28 % 30}")
        n += 1
    return " ".join(words)[:size]


def _value(node: dict[str, Any], defs: dict[str, Any], how: str, salt: int = 0) -> Any:
    """A value for a schema node: 'min' (smallest valid), 'max' (every bound reached), 'over' (one
    past a bound), 'dates' (the bound filled with distinct dates), 'repeat' (one date, repeated)."""
    if "$ref" in node:
        return _value(defs[node["$ref"].rsplit("/", 1)[-1]], defs, how, salt)
    if "enum" in node:
        return node["enum"][-1]
    if branches := node.get("anyOf"):
        real = [b for b in branches if b.get("type") != "null"]
        return _value(real[-1], defs, how, salt)
    kind = node.get("type")
    if kind == "string":
        top = node["maxLength"]
        size = {"min": max(node.get("minLength", 1), 1), "max": top, "over": top + 1}.get(how, top)
        if how == "dates":
            return _date_text(size, salt)
        return ("March 2020 " * (size // 11 + 1))[:size]
    if kind == "array":
        top = node["maxItems"]
        count = {"min": 1, "over": top + 1}.get(how, top)
        inner = "max" if how == "over" else how
        return [_value(node["items"], defs, inner, salt + 97 * i) for i in range(count)]
    if kind in ("integer", "number"):
        top = node.get("maximum", node.get("exclusiveMaximum"))
        low = node.get("minimum", node.get("exclusiveMinimum", 0))
        value = top + 1 if how == "over" else (top if how != "min" else max(low, 1))
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return how != "min"
    raise AssertionError(f"no value for {node}")


def _deep(depth: int) -> Any:
    value: Any = "x"
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


def cases() -> list[tuple[str, str, dict[str, Any], bool]]:
    """(tool, case, arguments, must be refused as invalid)."""
    out = []
    for name, spec in registry.all_tools().items():
        schema = spec.input_schema()
        defs, props, required = schema.get("$defs", {}), schema.get("properties", {}), schema.get("required", [])
        base = {k: _value(props[k], defs, "min") for k in required}
        out.append((name, "minimal", base, False))
        out.append((name, "large", {k: _value(v, defs, "max") for k, v in props.items()}, False))
        out.append((name, "many", {**base, **{f"extra{i}": i for i in range(EXTRA_KEYS)}}, True))
        for key, node in props.items():
            out.append((name, f"over:{key}", {**base, key: _value(node, defs, "over")},
                        not (node.get("type") == "boolean" or "enum" in node)))
            out.append((name, f"deep:{key}", {**base, key: _deep(DEPTH)}, True))
            if "string" in str(node):
                out.append((name, f"dates:{key}", {**base, key: _value(node, defs, "dates")}, False))
                out.append((name, f"repeat:{key}", {**base, key: _value(node, defs, "repeat")}, False))
    # The issue's call: 20 tags of 5,400 repeats of "March 2020"; and a text of exactly as many distinct
    # dates as one check parses, so the count is seen to move.
    out.append(("recall_remember", "issue", {"text": "checked", "tags": ["March 2020" * 5400] * 20}, True))
    at_bound = " ".join(f"{d} March {1990 + d}" for d in range(1, dates.MAX_PARSES + 1))
    out.append(("recall_remember", "at-bound", {"text": f"Restarted the queue. {at_bound}"}, False))
    out += [("recall_remember", f"future:{i}", {"text": f"Status: green; the window opens {w}."}, False)
            for i, w in enumerate(FUTURE_WORDINGS)]
    return out


# One or two of each class of issue #32 §3, as recall_remember receives them: each must be refused.
FUTURE_WORDINGS = ["2031_03_01", "2031:03:01", "01.03.31", "03/2031", "2031-W09", "KW 9/2031", "2031-060",
                   "(ts=1930000000)", '{"expires": 1930000000000}', "1 марта 2031", "2031年3月1日",
                   "t\u043emorrow", "\uff54\uff4f\uff4d\uff4f\uff52\uff52\uff4f\uff57", "2031-\u200b03-01",
                   "in three more days", "the coming week", "a week from Monday", "overmorrow", "T+3d"]
CASES = cases()


@pytest.fixture(scope="module")
def fuzzed(stack, tmp_path_factory) -> dict[tuple[str, str], tuple[Any, int]]:
    tmp = tmp_path_factory.mktemp("fuzz")
    account, owner = stack.new_account("fuzz")
    key = stack.root.register_user(account, "fuzzer", "user")
    for folder in ("viking://resources/shared", "viking://resources/agents", "viking://resources/agents/fuzzer"):
        owner.ensure_dir(folder)
    owner.write("viking://resources/shared/runbook.md", "# Runbook\nRestart the queue on 3 March 2020.\n", wait=True)
    owner.wait()
    policy = {"version": 1,
              "areas": {"shared": "viking://resources/shared", "fuzzer": "viking://resources/agents/fuzzer"},
              "readers": {"fuzzer": {"kind": "agent", "account": account, "user": "fuzzer",
                                     "areas": {"shared": "read", "fuzzer": "write"}, "remember_to": "fuzzer",
                                     "tools": TOOLS}}}
    (tmp / "policy.yaml").write_text(yaml.safe_dump(policy))
    inventory = tmp / "inventory.yaml"
    inventory.write_text(yaml.safe_dump([{"id": "build-box", "kind": "host", "access": ["true"]}]))
    cfg = yaml.safe_load(stack.config_path.read_text())
    cfg["guard"] = {"policy": str(tmp / "policy.yaml"), "audit_log": str(tmp / "audit.jsonl")}
    cfg["vault"] = {"files": [], "store": str(tmp / "vault.sqlite")}
    cfg["inventory"] = {"files": [str(inventory)]}
    cfg["home"] = str(tmp / "home")
    accounts.record_created(tmp / "home", account, datetime.now(UTC) - timedelta(days=5))
    config = tmp / "muninn.yaml"
    config.write_text(yaml.safe_dump(cfg))
    credentials.for_server(muninn_config.load(config)).set(credentials.user_key_name(account, "fuzzer"), key)
    counts = tmp / "parses"
    counts.touch()
    server = Path(__file__).with_name("counted_server.py")
    params = StdioServerParameters(command=sys.executable, env={**stack.env, "MUNINN_PARSE_COUNT": str(counts)},
                                   args=[str(server), "mcp", "--profile", "fuzzer", "--config", str(config)])

    def parsed() -> int:
        return len(counts.read_text().splitlines())

    async def main() -> dict[tuple[str, str], tuple[Any, int]]:
        out = {}
        async with Client(params, read_timeout_seconds=600) as client:
            for tool, case, args, _ in CASES:
                before = parsed()
                result = await client.call_tool(tool, args)
                out[tool, case] = (result, parsed() - before)
        return out

    return anyio.run(main)


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def test_the_fuzz_covers_every_tool_and_argument() -> None:
    per_tool = {t: sum(1 for c in CASES if c[0] == t) for t in TOOLS}
    assert set(per_tool) == set(registry.all_tools()) and all(n >= 3 for n in per_tool.values())
    args = sum(len(s.input_schema().get("properties", {})) for s in registry.all_tools().values())
    assert sum(1 for c in CASES if c[1].startswith("over:")) == args


@pytest.mark.parametrize(("tool", "case", "args", "invalid"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_each_call_is_answered_or_refused_within_bounded_work(fuzzed, tool: str, case: str, args: dict,
                                                              invalid: bool) -> None:
    result, parses = fuzzed[tool, case]
    text = _text(result)
    assert not CRASH.match(text), text[:300]
    if invalid:
        assert result.is_error and text.startswith("refused: invalid arguments"), text[:300]
    else:
        assert not result.is_error or text.startswith(("refused:", "failed:")), text[:300]
        assert "invalid arguments" not in text, text[:300]
    assert parses <= dates.MAX_PARSES, (parses, text[:200])


def test_the_issues_call_is_refused_by_the_schema(fuzzed) -> None:
    """20 tags of 5,400 repeats of 'March 2020' is past the tags' length: refused before any parsing."""
    result, parses = fuzzed["recall_remember", "issue"]
    assert result.is_error and "tags" in _text(result) and parses == 0


@pytest.mark.parametrize("i", range(len(FUTURE_WORDINGS)))
def test_each_class_of_future_date_is_refused_through_the_server(fuzzed, i: int) -> None:
    result, _ = fuzzed["recall_remember", f"future:{i}"]
    assert result.is_error and "after now" in _text(result), (FUTURE_WORDINGS[i], _text(result)[:200])


def test_the_count_moves_when_dates_are_read(fuzzed) -> None:
    """As many distinct dates as one check reads: all are parsed, the note is recorded."""
    result, parses = fuzzed["recall_remember", "at-bound"]
    assert not result.is_error, _text(result)
    assert parses == dates.MAX_PARSES
