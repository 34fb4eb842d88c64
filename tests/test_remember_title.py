"""A remembered fact's title is cut at 120 characters of scrubbed text, never inside a `[REDACTED:…]` marker:
half a marker (`… and [`, `[REDAC`) would show in every listing and break a markdown link."""

from __future__ import annotations

import re

import pytest

from muninn.plugins.mcp.tools.remember import TITLE_MAX, _cut_title

WHOLE = re.compile(r"\[REDACTED:[^\]\n]*\]")
NAMES = ["foo-token", "auth-header", "ds:Base64HighEntropyString", "x"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("start", range(TITLE_MAX - 40, TITLE_MAX + 2))
def test_a_cut_never_leaves_part_of_a_marker(name: str, start: int) -> None:
    title = "w" * start + f"[REDACTED:{name}]" + " and more words after it"
    cut = _cut_title(title)
    assert len(cut) <= TITLE_MAX and title.startswith(cut)
    assert "[" not in WHOLE.sub("", cut), cut[-30:]
    if start + len(f"[REDACTED:{name}]") <= TITLE_MAX:
        assert f"[REDACTED:{name}]" in cut   # a whole marker before the cut stays


@pytest.mark.parametrize("title", ["short", "x" * TITLE_MAX, "y" * 500, "a [b] c " * 40])
def test_a_title_without_markers_is_cut_at_the_limit(title: str) -> None:
    assert _cut_title(title) == title[:TITLE_MAX].rstrip()
