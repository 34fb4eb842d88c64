"""One registry for sources, rules, tools, doctor checks, nightly jobs, upgrade steps and after-sync
hooks: the built-ins come through the same hooks an outside plugin uses, and what runs never
depends on which module happened to be imported first."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from muninn.core import hookspecs, policy, registry
from muninn.core.errors import ConfigError, ExitCode

ROOT = Path(__file__).resolve().parents[1]

# (what, the registry call as text, names the built-ins must contribute)
BUILTINS = [
    ("sources", "list(registry.sources())", ["tasks", "notes", "observations", "secrets", "inventory", "repo"]),
    ("rules", "list(registry.rules())", ["aws-key", "private-key", "jwt"]),
    ("tools", "list(registry.tools())", ["recall_search", "recall_remember", "recall_status"]),
    ("stages", "[s.name for s in registry.stages()]", ["analyse", "vector", "keyword", "rerank", "cap"]),
    ("features", "[f.name for f in registry.features()]", ["keyword", "vector", "fact", "header", "date"]),
    ("commands", "[m for m, _, _ in registry.commands()]",
     ["muninn.plugins.stack.init_cli", "muninn.nightly.cli", "muninn.export.cli", "muninn.plugins.mcp.cli"]),
    ("checks", "[f.__module__ + '.' + f.__name__ for f in registry.checks()]",
     ["muninn.plugins.stack.doctor.packages", "muninn.plugins.search.doctor_check.reranker_weights",
      "muninn.plugins.search.doctor_check.keyword_index", "muninn.plugins.access.doctor_check.vault",
      "muninn.plugins.mcp.doctor_check.guard_policy"]),
    ("jobs", "list(registry.jobs())",
     ["acl-drift", "skills-drift", "leak-gate", "server-leak-scan", "completeness", "verify", "backup"]),
    ("upgrades", "[s.to for s in registry.upgrade_steps()]", [1]),
    ("after_sync", "[i.plugin_name for i in registry.manager().hook.after_sync.get_hookimpls()]",
     ["muninn.plugins.search.plugin"]),
]


def _fresh(code: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    """Run `code` in a new interpreter that imports nothing of muninn's but the registry."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         env=env, cwd=cwd)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.mark.parametrize(("what", "call", "expected"), BUILTINS, ids=[b[0] for b in BUILTINS])
def test_builtins_come_through_the_registry_alone(what: str, call: str, expected: list) -> None:
    """No CLI module, no feature package imported first: the registry alone finds every built-in."""
    got = json.loads(_fresh(f"import json\nfrom muninn.core import registry\nprint(json.dumps({call}))"))
    missing = [e for e in expected if e not in got]
    assert not missing, f"{what}: {missing} not registered (got {got})"


def test_builtins_are_listed_once() -> None:
    assert [registry.manager().get_plugin(name).__name__ for name in registry.BUILTIN] == list(registry.BUILTIN)
    # No module registers by decorating itself: the old side-effect doors are gone.
    pattern = re.compile(r"^@(register|check|job|doctor\.check|hooks\.on_after_sync)\b|^register\(ToolSpec", re.M)
    offenders = [str(p.relative_to(ROOT)) for folder in ("muninn", "export", "guards", "plugins", "nightly", "evals")
                 for p in (ROOT / folder).rglob("*.py") if pattern.search(p.read_text())]
    assert offenders == []


def test_after_sync_keeps_the_keyword_index_without_the_search_package_imported(tmp_path: Path) -> None:
    code = """
        import sys
        from muninn.core import config, registry
        settings = config.load(None)
        assert not any(m.startswith("muninn.plugins.search") for m in sys.modules), "imported too early"
        registry.after_sync(settings, "viking://resources/notes",
                            {"viking://resources/notes/wg.md": "# Tunnel\\nwg-quick up office\\n"}, [])
        from muninn.plugins.search import keyword
        idx = keyword.KeywordIndex(settings.paths.search_index())
        print([h.uri for h in idx.candidates("tunnel office", "viking://resources/notes", 5)])
    """
    import os
    env = {**os.environ, "MUNINN_HOME": str(tmp_path / "home")}
    assert _fresh(code, env=env) == "['viking://resources/notes/wg.md']"


class _Outside:
    """An outside plugin: one of each kind, registered the way an entry point's module would be."""

    def __init__(self, duplicate: str | None = None) -> None:
        self.duplicate = duplicate

    @hookspecs.hookimpl
    def register_tools(self, register) -> None:
        from muninn.plugins.mcp.registry import Output, Params, ToolSpec

        name = "recall_search" if self.duplicate == "tools" else "recall_weather"
        register(ToolSpec(name=name, description="Say what the weather is; an outside tool.", params=Params,
                          handler=lambda session, p: Output("sunny"), access="none"))

    @hookspecs.hookimpl
    def register_jobs(self, register) -> None:
        register("verify" if self.duplicate == "jobs" else "weather", lambda ctx: None)

    @hookspecs.hookimpl
    def register_rules(self, register) -> None:
        from muninn.guards.rules import Rule

        class Weather(Rule):
            name = "aws-key" if self.duplicate == "rules" else "weather-token"
            patterns = (re.compile(r"wx_[0-9a-f]{16}"),)

        register(Weather)


@pytest.fixture
def outside():
    plugins = []

    def add(duplicate: str | None = None) -> _Outside:
        plugin = _Outside(duplicate)
        registry.add(plugin)
        plugins.append(plugin)
        return plugin

    yield add
    for plugin in plugins:
        registry.remove(plugin)


def test_an_outside_plugin_goes_through_the_same_door(outside, tmp_path: Path) -> None:
    outside()
    assert "recall_weather" in registry.tools() and registry.tool_access()["recall_weather"] == "none"
    assert list(registry.jobs())[-1] == "weather"
    from muninn.guards.redact.patterns import PatternScanner

    assert "weather-token" in [r.name for r in PatternScanner(use_ds=False).rules]
    path = tmp_path / "policy.yaml"
    path.write_text("version: 1\nareas: {shared: viking://resources/shared}\nreaders:\n"
                    "  owner: {kind: owner, account: a, user: owner, areas: {shared: manage},\n"
                    "          tools: [recall_search, recall_weather]}\n")
    assert policy.load(path).profile("owner").tools == ("recall_search", "recall_weather")


def test_an_outside_plugin_is_gone_once_removed(outside) -> None:
    plugin = outside()
    registry.remove(plugin)
    assert "recall_weather" not in registry.tools() and "weather" not in registry.jobs()
    registry.add(plugin)  # the fixture removes it again


@pytest.mark.parametrize("kind, call", [("tools", registry.tools), ("jobs", registry.jobs),
                                        ("rules", registry.rules)])
def test_a_name_registered_twice_is_an_error(outside, kind: str, call) -> None:
    outside(duplicate=kind)
    with pytest.raises(ValueError, match="registered twice"):
        call()


@pytest.mark.parametrize("tools, line", [("[recall_search, recall_weather]", 4), ("[recal_search]", 4)])
def test_the_policy_checks_tool_names_against_the_registry(tmp_path: Path, tools: str, line: int) -> None:
    """Without the weather plugin registered, its tool is as unknown as a typo: exit 2, file and line."""
    path = tmp_path / "policy.yaml"
    path.write_text("version: 1\nareas: {shared: viking://resources/shared}\nreaders:\n"
                    f"  owner: {{kind: owner, account: a, user: owner, areas: {{shared: manage}}, tools: {tools}}}\n")
    with pytest.raises(ConfigError, match="unknown tool") as err:
        policy.load(path)
    assert err.value.exit_code == ExitCode.BAD_INPUT and err.value.path == str(path) and err.value.line == line
    assert "tools" in str(err.value)


def test_an_entry_point_plugin_is_loaded(tmp_path: Path) -> None:
    """A package that declares `[muninn]` in its entry points is picked up with no other wiring."""
    (tmp_path / "weather_plugin.py").write_text(textwrap.dedent("""
        from muninn.core.hookspecs import hookimpl

        @hookimpl
        def register_jobs(register):
            register("weather", lambda ctx: None)
    """))
    dist = tmp_path / "weather_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: weather-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[muninn]\nweather = weather_plugin\n")
    import os
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    assert _fresh("from muninn.core import registry\nprint(list(registry.jobs())[-1])", env=env) == "weather"
