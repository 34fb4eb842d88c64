"""Bounded work per call: every tool argument has a length and a count limit (the registry refuses a
tool without), the date reader parses each distinct span once and at most MAX_PARSES a check, and a
message nested too deep for the SDK's parser still reaches the guard. The stdio fuzz of every tool is
tests/test_mcp_fuzz.py."""

from __future__ import annotations

import json
from typing import Annotated, Any

import dateparser
import mcp_types as types
import pytest
from pydantic import Field

from muninn.core import registry as core_registry
from muninn.core.errors import ConfigError
from muninn.core.hookspecs import hookimpl
from muninn.guards.dates import check as dates
from muninn.plugins.mcp import registry
from muninn.plugins.mcp.registry import Output, Params, ToolSpec
from muninn.plugins.mcp.stdin_lines import CUT, MAX_DEPTH, cap_depth


def test_every_registered_tool_is_bounded() -> None:
    for name, spec in registry.all_tools().items():
        assert registry.unbounded(spec.input_schema()) == [], name


class _Open(Params):
    text: str


class _OpenList(Params):
    items: list[Annotated[str, Field(max_length=10)]]


class _OpenItems(Params):
    items: list[str] = Field(max_length=5)


class _OpenNumber(Params):
    n: int = Field(ge=0)


class _AnyValue(Params):
    value: Any


class _OpenDict(Params):
    table: dict[str, Annotated[str, Field(max_length=5)]]


class _Nested(Params):
    inner: _Open | None = None


class _Bounded(Params):
    text: str = Field(max_length=10)
    items: list[Annotated[str, Field(max_length=10)]] = Field(default_factory=list, max_length=3)
    n: int = Field(1, ge=0, le=5)
    flag: bool = False


UNBOUNDED = {"a string": _Open, "a list": _OpenList, "a list's items": _OpenItems, "a number": _OpenNumber,
             "any value": _AnyValue, "an open object": _OpenDict, "a nested model": _Nested}


@pytest.mark.parametrize("shape", list(UNBOUNDED))
def test_the_check_names_each_unbounded_shape(shape: str) -> None:
    assert registry.unbounded(UNBOUNDED[shape].model_json_schema())


def test_a_bounded_model_passes() -> None:
    assert registry.unbounded(_Bounded.model_json_schema()) == []


@pytest.mark.parametrize("shape", list(UNBOUNDED))
def test_the_registry_refuses_a_tool_with_an_unbounded_argument(shape: str) -> None:
    spec = ToolSpec(name=f"outside_{shape.replace(' ', '_')}", description="an outside plugin's tool " * 4,
                    params=UNBOUNDED[shape], handler=lambda session, p: Output("x"), access="none")

    class Plugin:
        @hookimpl
        def register_tools(self, register) -> None:
            register(spec)

    plugin = Plugin()
    core_registry.add(plugin, name=f"unbounded-{shape}")
    try:
        with pytest.raises(ConfigError, match="unbounded arguments"):
            registry.all_tools()
    finally:
        core_registry.remove(plugin)
    assert spec.name not in registry.all_tools()


@pytest.fixture
def parser_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every call of the real dateparser.parse, counted (the cache is emptied first)."""
    calls: list[str] = []
    real = dateparser.parse

    def counted(text: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(dateparser, "parse", counted)
    dates._named.cache_clear()
    return calls


def test_the_issues_text_is_parsed_once(parser_calls: list[str]) -> None:
    """20 tags of 5,400 repeats of 'March 2020' (what recall_remember reads): one span, one parse."""
    said = "\n".join(["March 2020 " * 5400] * 20)
    assert dates.check_observation(said).allowed
    assert len(parser_calls) == 1


@pytest.mark.parametrize("distinct", [1, 5, dates.MAX_PARSES - 1, dates.MAX_PARSES])
def test_up_to_the_bound_every_distinct_date_is_read(parser_calls: list[str], distinct: int) -> None:
    text = " ".join([" ".join(f"{d} March {1990 + d}" for d in range(1, distinct + 1))] * 3)
    assert dates.check_observation(f"Restarted the queue. {text}").allowed
    assert len(parser_calls) == distinct


@pytest.mark.parametrize("distinct", [dates.MAX_PARSES + 1, 100, 2000])
def test_past_the_bound_the_text_is_refused_unread(parser_calls: list[str], distinct: int) -> None:
    text = " ".join(f"{d % 28 + 1} March {1900 + d // 28}" for d in range(distinct))
    decision = dates.check_observation(text)
    assert not decision.allowed and "at most" in decision.reason and "kind='plan'" in decision.reason
    assert parser_calls == []


def test_a_cached_span_is_not_parsed_again(parser_calls: list[str]) -> None:
    for _ in range(5):
        dates.check_observation("The cert was renewed on 3 March 2021.")
    assert len(parser_calls) == 1


def _deep(depth: int, inner: str = '"x"') -> str:
    return "".join("[" if i % 2 else '{"k":' for i in range(depth)) + inner + "".join(
        "]" if i % 2 else "}" for i in reversed(range(depth)))


def _call(arguments: str) -> str:
    return ('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"recall_search","arguments":'
            f'{{"query":{arguments},"s":"[[[[{{{{ \\" ]]"}}}}}}')


@pytest.mark.parametrize("depth", [MAX_DEPTH, 200, 1000, 100_000])
def test_a_deep_message_keeps_its_id_and_reaches_the_guard(depth: int) -> None:
    line = _call(_deep(depth))
    capped = cap_depth(line)
    message = types.jsonrpc_message_adapter.validate_json(capped, by_name=False)
    assert message.id == 7
    args = json.loads(capped)["params"]["arguments"]
    assert args["s"] == '[[[[{{ " ]]'                  # brackets inside strings are text
    assert (CUT in capped) == (depth + 3 > MAX_DEPTH)


@pytest.mark.parametrize("line", ['{"jsonrpc":"2.0","id":1,"method":"ping"}', _call('"plain"'), _call(_deep(20)),
                                  '{"a": "' + "[" * 500 + '"}'])
def test_a_shallow_line_is_left_as_it_is(line: str) -> None:
    assert cap_depth(line) == line


def test_an_unbalanced_line_is_left_for_the_sdk_to_refuse() -> None:
    line = '{"jsonrpc":"2.0","id":1,"params":' + "[" * 100
    assert cap_depth(line) == line
