"""The search plugin's hooks: its stages and fusion features (each listed here, in order), its doctor
lines, the keyword index kept current after each sync, and the index's workspace upgrade step.
Imports happen inside each hook: the reranker loader behind them must not load for `muninn --help`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from muninn.core.config import Settings
from muninn.core.hookspecs import hookimpl


@hookimpl
def register_stages(register: Callable[[Any], Any]) -> None:
    from muninn.plugins.search.pipeline import STAGES

    for stage in STAGES:       # pipeline.py holds the order
        register(stage)


@hookimpl
def register_features(register: Callable[[Any], Any]) -> None:
    from muninn.plugins.search.features import FEATURES

    for feature in FEATURES:   # features.py holds the order of the sums
        register(feature)


@hookimpl
def register_checks(register: Callable[[Callable[..., Any]], Any]) -> None:
    from muninn.plugins.search import doctor_check

    register(doctor_check.reranker_weights)
    register(doctor_check.keyword_index)
    register(_outside_checks)


@hookimpl
def register_stores(register: Callable[[Callable[..., Any]], Any]) -> None:
    from muninn.plugins.search import reader_index

    register(reader_index.store_rows)
    register(_outside_rows)


@hookimpl
def register_store_leaks(register: Callable[[Callable[..., Any]], Any]) -> None:
    from muninn.plugins.search import reader_index

    register(reader_index.leaks)


@hookimpl
def register_upgrades(register: Callable[[Any], Any]) -> None:
    from muninn.plugins.search import upgrade_index

    register(upgrade_index.STEP)
    register(upgrade_index.PURGE)


@hookimpl
def after_sync(settings: Settings, area: str, written: Mapping[str, str], removed: Sequence[str]) -> None:
    from muninn.plugins.search.sync_hook import refresh_keyword_index

    refresh_keyword_index(settings, area, written, removed)


@hookimpl
def after_policy_apply(settings: Settings, policy: Any) -> dict[str, str]:
    from muninn.plugins.search import reader_index

    return reader_index.follow_policy(settings, policy)


@hookimpl
def after_up(settings: Settings, say: Callable[[str], None]) -> None:
    from muninn.plugins.search import serve

    serve.warm_for_up(settings, say)


@hookimpl
def before_down(settings: Settings, say: Callable[[str], None]) -> int:
    from muninn.plugins.search import serve

    return serve.stop_all(settings, say)


def _outside_checks(settings: Settings) -> list[Any]:
    # Imported only when a check runs, and nothing is asked with no outside memory declared or suggested.
    from muninn.plugins.search.outside import report

    return report.checks(settings)


def _outside_rows(settings: Settings, reader: str | None) -> list[dict[str, Any]]:
    if not settings.outside:
        return []
    from muninn.plugins.search.outside import report

    return report.store_rows(settings, reader)
