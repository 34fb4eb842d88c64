"""The pipeline as a list of stages: the request resolved once, the runner (switches, applies,
timings), the switches turned into CLI flags and MCP parameters, and the fusion features. No server."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import pytest
import typer
from pydantic import ValidationError
from typer.testing import CliRunner

from muninn.core import registry
from muninn.core.config import RerankSettings, SearchSettings, Settings
from muninn.plugins.search import flags, pipeline
from muninn.plugins.search.pipeline import run, stage_switches
from muninn.plugins.search.request import SearchRequest, Switch
from muninn.plugins.search.state import SearchState
from muninn.plugins.search.types import SearchError

LEGACY_FLAGS = ["--no-rerank", "--no-hybrid", "--no-routing", "--no-recency", "--no-dates"]
NOW = dt.datetime(2025, 6, 1, tzinfo=dt.UTC)
STAGES, SWITCHES, FEATURES = tuple(registry.stages()), stage_switches(), registry.features()


def test_stage_and_switch_names_are_unique_and_every_switch_reads_a_setting() -> None:
    names = [s.name for s in STAGES]
    assert len(names) == len(set(names))
    assert len({s.name for s in SWITCHES}) == len(SWITCHES)
    cfg = SearchSettings()
    for switch in SWITCHES:
        assert switch.default(cfg) is True           # every switch is on by default


@pytest.mark.parametrize("name, setting", [
    ("hybrid", {"hybrid": False}), ("routing", {"routing": False}), ("dates", {"dates": False}),
    ("recency", {"recency": False}), ("rerank", {"rerank": RerankSettings(enabled=False)}),
])
def test_a_switch_defaults_to_its_setting(name: str, setting: dict) -> None:
    req = SearchRequest.resolve(SearchSettings(**setting), SWITCHES, "q", now=NOW)
    assert req.on(name) is False
    assert all(req.on(s.name) for s in SWITCHES if s.name != name)


@pytest.mark.parametrize("overrides, expected_off", [
    ({}, set()),
    ({"rerank": None, "hybrid": None}, set()),                      # None: as configured
    ({"rerank": False}, {"rerank"}),
    ({"hybrid": False, "routing": False, "dates": False}, {"hybrid", "routing", "dates"}),
    ({"recency": False, "rerank": True}, {"recency"}),
])
def test_overrides_win_over_settings(overrides: dict, expected_off: set) -> None:
    req = SearchRequest.resolve(SearchSettings(), SWITCHES, "q", now=NOW, overrides=overrides)
    assert {name for name, on in req.switches.items() if not on} == expected_off


def test_override_turns_a_configured_off_switch_back_on() -> None:
    cfg = SearchSettings(recency=False)
    assert SearchRequest.resolve(cfg, SWITCHES, "q", now=NOW, overrides={"recency": True}).on("recency")


@pytest.mark.parametrize("text, kwargs, error", [
    ("   ", {}, SearchError),
    ("", {}, SearchError),
    ("q", {"since": "yesterday-ish"}, SearchError),
    ("q", {"since": "7x"}, SearchError),
    ("q", {"overrides": {"rerankk": False}}, TypeError),          # a typo is not silently ignored
])
def test_bad_requests_fail_with_a_sentence(text: str, kwargs: dict, error: type) -> None:
    with pytest.raises(error):
        SearchRequest.resolve(SearchSettings(), SWITCHES, text, now=NOW, **kwargs)


def test_request_resolves_defaults_once() -> None:
    req = SearchRequest.resolve(SearchSettings(k=7, target="viking://resources/x/"), SWITCHES, "  disk full  ",
                                since="7d", now=NOW)
    assert (req.text, req.k, req.targets, req.tokens) == ("disk full", 7, ("viking://resources/x",), 1500)
    assert req.since_at == NOW - dt.timedelta(days=7)
    req = SearchRequest.resolve(SearchSettings(), SWITCHES, "q", k=2, target="viking://t", tokens=99, now=NOW)
    assert (req.k, req.targets, req.tokens, req.since_at) == (2, ("viking://t",), 99, None)


# --- the runner ---

@dataclass
class _Recorder:
    name: str
    switch: Switch | None = None
    applies_to: bool = True
    seen: list[str] = field(default_factory=list)

    def applies(self, state: SearchState) -> bool:
        return self.applies_to

    def run(self, state: SearchState) -> None:
        self.seen.append(self.name)
        state.fused = list(state.fused)


def _state(switches: dict[str, bool]) -> SearchState:
    req = SearchRequest(text="q", k=4, targets=("viking://r",), now=NOW, since_at=None, briefing=False, tokens=10,
                        switches=switches)
    return SearchState(request=req, searcher=None)  # type: ignore[arg-type]  (the recorders need none)


@pytest.mark.parametrize("on, applies, ran", [
    (True, True, True),
    (False, True, False),      # switched off: skipped
    (True, False, False),      # nothing to do this query: skipped
    (False, False, False),
])
def test_runner_skips_switched_off_and_idle_stages_and_times_the_rest(on: bool, applies: bool, ran: bool) -> None:
    seen: list[str] = []
    stages = [_Recorder("first", seen=seen), _Recorder("mid", Switch("mid", "h"), applies, seen=seen),
              _Recorder("last", seen=seen)]
    state = _state({"mid": on})
    run(stages, state)
    assert seen == (["first", "mid", "last"] if ran else ["first", "last"])
    assert list(state.timings) == seen                 # timings come from the runner, one per stage run
    assert all(isinstance(ms, float) and ms >= 0 for ms in state.timings.values())


def test_pin_and_cap_are_timed_apart() -> None:
    names = [s.name for s in STAGES]
    assert names.index("pin") < names.index("cap") and names[-1] == "cap"


# --- CLI flags and MCP parameters, generated ---

def _app() -> typer.Typer:
    app = typer.Typer()
    got: dict = {}

    @app.command()
    @flags.switch_flags
    def cmd(k: int = typer.Option(4, "-k"), switches: flags.Switches = None) -> None:  # type: ignore[assignment]
        got.update(k=k, switches=switches)

    app.got = got  # type: ignore[attr-defined]
    return app


@pytest.mark.parametrize("args, off", [
    ([], set()),
    (["--no-rerank"], {"rerank"}),
    (["--no-hybrid", "--no-routing"], {"hybrid", "routing"}),
    (LEGACY_FLAGS, {"rerank", "hybrid", "routing", "recency", "dates"}),
    (["-k", "2", "--no-dates"], {"dates"}),
])
def test_switch_flags_become_switches(args: list[str], off: set) -> None:
    app = _app()
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    switches = app.got["switches"]  # type: ignore[attr-defined]
    assert set(switches) == {s.name for s in SWITCHES}
    assert {n for n, v in switches.items() if v is False} == off
    assert all(v is None for n, v in switches.items() if n not in off)     # None: as configured


@pytest.mark.parametrize("command", ["search", "eval"])
def test_every_switch_is_a_flag_of_search_and_eval(command: str) -> None:
    from muninn.cli import app

    result = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for flag in LEGACY_FLAGS + [f"--no-{s.name}" for s in SWITCHES]:
        assert flag in result.output


def test_unknown_flag_is_a_usage_error() -> None:
    assert CliRunner().invoke(_app(), ["--no-such-stage"]).exit_code == 2


def test_switches_offered_to_agents_become_tool_parameters(monkeypatch: pytest.MonkeyPatch) -> None:
    from muninn.plugins.mcp.registry import Params

    class Base(Params):
        query: str

    assert flags.agent_params(Base) is Base           # none is offered today: the contract is unchanged
    offered = (Switch("recency", "No nudge for newer facts.", agent=True), Switch("rerank", "x"))
    monkeypatch.setattr(flags, "SWITCHES", offered)
    model = flags.agent_params(Base)
    assert set(model.model_fields) == {"query", "recency"}
    assert flags.agent_switches(model(query="q", recency=False)) == {"recency": False}
    assert flags.agent_switches(model(query="q")) == {"recency": None}
    with pytest.raises(ValidationError):
        model(query="q", rerank=False)                # not offered: refused, not ignored


# --- fusion features ---

def test_features_are_named_once_and_weighted_by_their_settings() -> None:
    cfg = SearchSettings(keyword_weight=2.5, vector_weight=0.5, fact_weight=0.7, header_weight=0.3, date_weight=0.9,
                         window_weight=0.4, second_weight=1.5,
                         rerank=RerankSettings(header_blend=0.11, date_blend=0.22))
    names = [f.name for f in FEATURES]
    assert sorted(names) == sorted({"keyword", "vector", "fact", "window", "second", "header", "date", "passage"})
    r = Settings(search=cfg).ranking
    assert {f.name: f.weight(r) for f in FEATURES} == {"keyword": 2.5, "vector": 0.5, "fact": 0.7,
                                                         "window": 0.4, "second": 1.5, "header": 0.3,
                                                         "date": 0.9, "passage": 1.0}
    # Only the header and date match are read again after the rerank.
    assert {f.name: f.blend(r) for f in FEATURES if f.blend(r)} == {"header": 0.11, "date": 0.22}


def test_the_old_import_path_still_works() -> None:
    from muninn.plugins.search.pipeline import Searcher, search

    assert callable(search) and Searcher is pipeline.Searcher


@pytest.mark.parametrize("identifiers, route, applies", [
    (True, "keyword", True), (True, "hybrid", True),
    (False, "keyword", False),     # an identifier query keeps BM25's order
    (False, "hybrid", True), (False, "vector", True),
])
def test_rerank_of_identifier_queries_follows_its_setting(identifiers: bool, route: str, applies: bool) -> None:
    from types import SimpleNamespace

    from muninn.core.config import SearchSettings
    from muninn.plugins.search.stages.rerank_stage import Rerank
    from muninn.plugins.search.types import Candidate

    cfg = SearchSettings()
    cfg = cfg.model_copy(update={"rerank": cfg.rerank.model_copy(update={"identifiers": identifiers})})
    state = _state({})
    state.searcher = SimpleNamespace(cfg=cfg)    # type: ignore[assignment]
    state.route, state.fused = route, [Candidate(uri="viking://r/a.md")]
    assert Rerank().applies(state) is applies
