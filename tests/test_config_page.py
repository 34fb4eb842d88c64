"""docs/configuration.md and the settings models are one contract, as the exit-code table and `ExitCode` are.

The page is generated (`python -m muninn.core.config_page --write`); these tests fail when it was not
regenerated, when a key has no description, and, read independently of the generator, when a key of the
models or its default is missing from the page."""

from __future__ import annotations

import json
import re

import pytest
from pydantic import BaseModel, Field

from muninn.core import config_page
from muninn.core.config import Settings
from muninn.core.ranking_profile import Ranking

_ROW = re.compile(r"^\| `([^`]+)` \| (.+?) \| (.+?) \| (.*) \|$")


def page_rows(text: str) -> dict[str, str]:
    """{key: default cell} over every table of the page (keys of source options are per source)."""
    rows: dict[str, str] = {}
    heading = ""
    for line in text.splitlines():
        if line.startswith("### `kind: "):
            heading = line.removeprefix("### `kind: ").rstrip("`") + ":"
        elif line.startswith("`") and ", inside `" in line:
            heading += line.split("`")[1] + "."
        if m := _ROW.match(line):
            rows[heading + m[1] if heading else m[1]] = m[2]
    return rows


def _leaves(data: dict, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in data.items():
        if isinstance(value, dict) and key not in ("options", "tables"):
            out |= _leaves(value, f"{prefix}{key}.")
        else:
            out[f"{prefix}{key}"] = value
    return out


def test_the_page_is_what_the_models_generate() -> None:
    page = config_page.PAGE.read_text()
    assert page == config_page.render(), "docs/configuration.md is stale: run python -m muninn.core.config_page --write"


def test_every_key_has_a_description() -> None:
    missing = config_page.undescribed(Settings)
    for model in config_page.source_models():
        missing += config_page.undescribed(model)
    assert missing == [], "add a Field(description=...) to each"


def test_every_settings_key_and_default_is_on_the_page() -> None:
    # Read from Settings() itself, not through the generator: the defaults as the code applies them.
    rows = page_rows(config_page.PAGE.read_text())
    data = Settings().model_dump(mode="json", exclude={"source_file"})
    data["search"]["ranking"] = Ranking().model_dump(mode="json")   # the names search.ranking overrides
    defaults = _leaves(data)
    assert len(defaults) > 90
    problems = [f"{key}: not on the page" for key in defaults if key not in rows]
    problems += [f"{key}: page says {rows[key]}, code {json.dumps(value)}" for key, value in defaults.items()
                 if key in rows and rows[key] != f"`{json.dumps(value, ensure_ascii=False)}`"
                 and rows[key] != "below the table"]
    assert problems == []


@pytest.mark.parametrize("key, default", [
    # The keys and defaults the hand-written block in the README had lost or got wrong (issue 30).
    ("server.timeout", "`60.0`"),
    ("server.busy_wait", "`120.0`"),
    ("search.fetch_workers", "`8`"),
    ("search.rerank.threads", "`null`"),
    ("search.rerank.timeout", "`30.0`"),
    ("vault.files", "`[]`"),
    ("inventory.files", "`[]`"),
])
def test_the_drifted_keys_are_right(key: str, default: str) -> None:
    assert page_rows(config_page.PAGE.read_text())[key] == default


@pytest.mark.parametrize("kind", sorted(config_page.builtin_sources()))
def test_every_source_option_is_on_the_page(kind: str) -> None:
    rows = page_rows(config_page.PAGE.read_text())
    options = config_page.builtin_sources()[kind].Options
    for name in options.model_fields:
        assert f"{kind}:{name}" in rows, f"{kind} option {name} is not on the page"
    assert config_page.builtin_sources()["notes"].Options.model_fields.keys() >= {"max_chars", "min_chars"}


def test_the_checks_catch_a_drifted_page() -> None:
    page = config_page.PAGE.read_text()
    # A row dropped, or a default edited by hand, is seen by both the comparison and the reader.
    dropped = "\n".join(line for line in page.splitlines() if "`server.busy_wait`" not in line)
    assert dropped != config_page.render() and "server.busy_wait" not in page_rows(dropped)
    edited = page.replace("| `search.k` | `4` |", "| `search.k` | `5` |")
    assert edited != page and page_rows(edited)["search.k"] == "`5`"


def test_an_undescribed_key_is_named() -> None:
    class Inner(BaseModel):
        bare: int = 1
        told: int = Field(2, description="has one")

    class Outer(BaseModel):
        inner: Inner = Field(default_factory=Inner)

    assert [m.split(" ")[-1] for m in config_page.undescribed(Outer)] == ["(inner.bare)"]


def test_the_defaults_file_on_the_page_loads_as_the_defaults(tmp_path) -> None:
    from muninn.core import config

    page = config_page.PAGE.read_text()
    block = page.split("## Every default, as one file", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "muninn.yaml"
    path.write_text(block)
    loaded = config.load(path, environ={})
    assert loaded.model_dump(exclude={"source_file"}) == Settings().model_dump(exclude={"source_file"})
