"""Keys of muninn.yaml that moved: an old file still loads, each moved key keeps its effect, and a warning
names its new place once."""

from __future__ import annotations

import sys
import warnings
from typing import Any

from muninn.core.ranking_profile import NAMES

# Keys that lived in `search:` and `search.rerank:` and are now names of the ranking profile.
SEARCH_KEYS = ("rrf_k", "fusion", "vector_weight", "fact_weight", "keyword_weight", "header_weight", "window_weight",
               "second_weight", "window_chars", "header_min_share", "date_weight", "date_slack_days",
               "content_chars", "half_life_days", "recency_weight", "strong_match")
RERANK_KEYS = ("passage_window", "min_confidence", "unsure_weights", "blend", "header_blend", "date_blend",
               "max_length", "batch_size", "length_sort", "gap", "skip_margin")
DROPPED = {"spin": "search.rerank.spin has no effect (onnx scores each batch on one thread, which never "
                   "busy-waits): remove it from muninn.yaml"}
assert set(SEARCH_KEYS) | set(RERANK_KEYS) <= NAMES


class MovedSetting(UserWarning):
    """A muninn.yaml key that moved; it still works."""


def into_ranking(data: Any) -> Any:
    """`search:` as written, with moved keys taken into `ranking:` (a key already there wins)."""
    if not isinstance(data, dict):
        return data
    data, taken = dict(data), {}
    for key in SEARCH_KEYS:
        if key in data:
            taken[key] = data.pop(key)
            _warn(f"search.{key}", key)
    return merged(data, taken)


def out_of_rerank(data: Any) -> tuple[Any, dict[str, Any]]:
    """`search.rerank:` as written less its moved keys, and those keys (SearchSettings takes them in)."""
    if not isinstance(data, dict):
        return data, {}
    data, taken = dict(data), {}
    for key in RERANK_KEYS:
        if key in data:
            taken[key] = data.pop(key)
            _warn(f"search.rerank.{key}", key)
    for key, why in DROPPED.items():
        if data.pop(key, None) is not None:
            warnings.warn(why, MovedSetting, stacklevel=2)
    return data, taken


def merged(data: dict[str, Any], taken: dict[str, Any]) -> dict[str, Any]:
    if taken:
        ranking = data.get("ranking")
        data["ranking"] = {**taken, **ranking} if isinstance(ranking, dict) else (ranking if ranking else taken)
    return data


def _warn(old: str, name: str) -> None:
    warnings.warn(f"{old} moved to search.ranking.{name} in muninn.yaml; it still applies as written",
                  MovedSetting, stacklevel=2)


def say_on_stderr() -> None:
    """The CLI shows a moved key as one line, `muninn: warning: ...`, not Python's warning with its source line."""
    shown = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        if issubclass(category, MovedSetting):
            sys.stderr.write(f"muninn: warning: {message}\n")
        else:
            shown(message, category, *args, **kwargs)

    warnings.showwarning = show
