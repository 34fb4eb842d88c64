"""The ranking profile: weights follow the embedder, `search.ranking` overrides them, and every key that moved
out of `search:` and `search.rerank:` still loads, keeps its effect, and says where it went. No server."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest
from pydantic import ValidationError

from muninn.core import config, embed_profiles, settings_moved
from muninn.core.config import RerankSettings, SearchSettings, Settings
from muninn.core.ranking_profile import NAMES, Ranking

ROOT = Path(__file__).resolve().parents[1]


def _load(tmp_path: Path, text: str) -> Settings:
    path = tmp_path / "muninn.yaml"
    path.write_text(f"home: {tmp_path / 'home'}\n{text}")
    return config.load(path, environ={})


def test_search_and_rerank_hold_at_most_25_settings() -> None:
    search = [n for n in SearchSettings.model_fields if n != "rerank"]
    assert len(search) + len(RerankSettings.model_fields) <= 25


@pytest.mark.parametrize("model, weight", [(embed_profiles.E5, 1.0), (embed_profiles.BGE, 2.0),
                                           (embed_profiles.MINILM, 2.0), ("/models/mine", 2.0)])
def test_the_keyword_weight_follows_the_embedder(model: str, weight: float) -> None:
    assert Settings(embed={"model": model}).ranking.keyword_weight == weight


def test_an_override_wins_over_the_profile() -> None:
    s = Settings(embed={"model": embed_profiles.BGE}, search={"ranking": {"keyword_weight": 0.5, "blend": 0.1}})
    assert (s.ranking.keyword_weight, s.ranking.blend) == (0.5, 0.1)


@pytest.mark.parametrize("section, key, value", [
    *[("search", k, v) for k, v in [("keyword_weight", 3.0), ("half_life_days", 30.0), ("strong_match", 0.5),
                                     ("fusion", "rrf"), ("content_chars", 900)]],
    *[("rerank", k, v) for k, v in [("blend", 0.5), ("min_confidence", 0.2), ("max_length", 128),
                                     ("unsure_weights", {"keyword": 2.0}), ("skip_margin", 1.5)]],
])
def test_an_old_key_loads_keeps_its_effect_and_names_its_new_place(tmp_path: Path, section: str, key: str,
                                                                   value: object) -> None:
    body = f"search:\n  {key}: {value!r}\n" if section == "search" else f"search:\n  rerank:\n    {key}: {value!r}\n"
    with pytest.warns(settings_moved.MovedSetting, match=rf"search\.ranking\.{key}"):
        s = _load(tmp_path, body.replace("'", '"'))
    assert getattr(s.ranking, key) == value


def test_every_moved_key_is_a_ranking_name_and_none_is_left_behind() -> None:
    moved = set(settings_moved.SEARCH_KEYS) | set(settings_moved.RERANK_KEYS)
    assert moved <= NAMES
    assert not moved & (set(SearchSettings.model_fields) | set(RerankSettings.model_fields))


def test_the_new_place_wins_over_the_old_one() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", settings_moved.MovedSetting)
        s = SearchSettings(keyword_weight=3.0, rerank={"blend": 0.9}, ranking={"keyword_weight": 1.5, "blend": 0.2})
    assert Ranking(**s.ranking).keyword_weight == 1.5 and Ranking(**s.ranking).blend == 0.2


def test_spin_is_dropped_with_a_warning(tmp_path: Path) -> None:
    with pytest.warns(settings_moved.MovedSetting, match="no effect"):
        s = _load(tmp_path, "search:\n  rerank:\n    spin: true\n")
    assert s.ranking == Settings().ranking


@pytest.mark.parametrize("ranking, words", [({"keyword_wieght": 1.0}, "unknown name"),
                                             ({"blend": -1}, "greater than or equal"),
                                             ({"fusion": "sum"}, "linear")])
def test_a_bad_override_is_a_config_error_naming_it(tmp_path: Path, ranking: dict, words: str) -> None:
    with pytest.raises((ValidationError, config.ConfigError), match=words):
        SearchSettings(ranking=ranking)


def test_only_ranking_py_sorts_candidates_by_score() -> None:
    """Order is decided in one module: no other search module sorts candidates by a score. types.over_targets
    merges one retriever's own list over several folders (that source's order, before any ranking)."""
    search = ROOT / "plugins" / "search"
    offenders = []
    for path in sorted(search.rglob("*.py")):
        if path.name == "ranking.py" or path.relative_to(search).as_posix() == "types.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in (
                    "sorted", "sort") and "score" in ast.unparse(node):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []
