"""docs/policy.md and the code are one contract, as docs/configuration.md and the settings models are: the
page is what muninn/core/policy_page.py generates, every key is described, the tool table's defaults are
what the policy loader gives each kind, and the example on the page loads."""

from __future__ import annotations

import re

from muninn.core import config_page, policy, policy_page, registry


def test_the_page_is_what_the_code_generates() -> None:
    page = policy_page.PAGE.read_text()
    assert page == policy_page.render(), "docs/policy.md is stale: run python -m muninn.core.policy_page --write"


def test_every_key_has_a_description() -> None:
    assert config_page.undescribed(policy.PolicyModel) + config_page.undescribed(policy.ReaderModel) == []


def test_the_example_loads_and_each_kind_holds_what_the_table_says() -> None:
    example = re.search(r"```yaml\n(.*?)```", policy_page.PAGE.read_text(), re.S).group(1)
    assert policy.parse(example).profile("raven").remember_to == "viking://resources/agents/raven"
    kinds = ("owner", "assistant", "agent")
    bare = policy.parse("areas: {a: viking://resources/a}\nreaders:\n" + "".join(
        f"  {k}: {{kind: {k}, account: home, user: {k}, areas: {{a: write}}, remember_to: a}}\n" for k in kinds))
    rows = {r.split("|")[1].strip(" `"): [c.strip() for c in r.split("|")[4:7]]
            for r in policy_page.tool_rows()[2:]}
    assert set(rows) == set(registry.tools())
    for i, kind in enumerate(("owner", "assistant", "agent")):
        held = {t for t, cells in rows.items() if cells[i] == "yes"}
        assert held == set(bare.profile(kind).tools), kind
    assert [bare.profile(k).trusted for k in ("owner", "assistant", "agent")] == [True, True, False]


def test_the_docs_index_links_the_page() -> None:
    readme = (policy_page.PAGE.parents[1] / "README.md").read_text()
    assert "(docs/policy.md)" in readme


def test_an_unknown_key_in_policy_yaml_is_named_with_the_nearest_and_this_page() -> None:
    import pytest

    from muninn.core.errors import ConfigError

    text = ("areas: {a: viking://resources/a}\nreaders:\n"
            "  raven: {kind: agent, account: home, user: raven, areas: {a: write}, remembr_to: a}\n")
    with pytest.raises(ConfigError) as err:
        policy.parse(text, "policy.yaml")
    assert "readers.raven.remembr_to" in str(err.value) and "did you mean `remember_to`?" in str(err.value)
    assert "docs/policy.md" in str(err.value) and err.value.line == 3
