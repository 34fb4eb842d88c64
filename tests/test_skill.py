"""The observation-log skill (seed 003): a SKILL.md an agent client loads, that names only tools and
recall_search parameters that exist, and says when to look, how to call and what it cannot answer."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from muninn.core import registry

SKILL = Path(__file__).resolve().parents[1] / "plugins" / "search" / "skills" / "observation-log" / "SKILL.md"
TEXT = SKILL.read_text(encoding="utf-8")
CALLS = re.findall(r"`(recall_\w+) (\{.*?\})`", TEXT)


def test_front_matter_has_the_name_and_a_description() -> None:
    head = yaml.safe_load(TEXT.split("---")[1])
    assert head["name"] == "observation-log" and len(head["description"]) > 40


@pytest.mark.parametrize("section", ["## When to look", "## How to call it", "## What it cannot answer"])
def test_every_section_is_there(section: str) -> None:
    assert section in TEXT


@pytest.mark.parametrize("trigger", ["failed", "seen before", "risky"])
def test_when_to_look_names_each_trigger(trigger: str) -> None:
    assert trigger in TEXT.split("## When to look")[1].split("##")[0]


def test_every_tool_it_names_is_registered() -> None:
    named = set(re.findall(r"\brecall_\w+", TEXT))
    assert named and named <= set(registry.tools()), named - set(registry.tools())


@pytest.mark.parametrize("tool, args", CALLS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(CALLS)])
def test_every_example_call_validates_against_the_tool(tool: str, args: str) -> None:
    spec = registry.tools()[tool]
    spec.params.model_validate(json.loads(args))   # raises on an unknown or ill-typed parameter


def test_examples_use_since_only_and_target() -> None:
    used = {k for _, args in CALLS for k in json.loads(args)}
    assert {"since", "only", "target"} <= used
