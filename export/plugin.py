"""muninn's own export sources, registered through the hook an outside source would use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from muninn.core.hookspecs import KnownValues, hookimpl


@hookimpl
def register_sources(register: Callable[[type], Any]) -> None:
    from muninn.export.sources import inventory, notes, observations, repo, secrets, tasks

    for cls in (tasks.TasksSource, notes.NotesSource, observations.ObservationsSource, secrets.SecretsSource,
                inventory.InventorySource, repo.RepoSource):
        register(cls)


@hookimpl
def register_checks(register: Callable[[Callable[..., Any]], Any]) -> None:
    from muninn.export import doctor_check

    register(doctor_check.sources)


@hookimpl
def register_known_values(register: Callable[[KnownValues], Any]) -> None:
    from muninn.export import known_values

    register(KnownValues("sources", known_values.found, declared=False, keyed=True))


@hookimpl
def register_upgrades(register: Callable[[Any], Any]) -> None:
    from muninn.export import area_root

    register(area_root.STEP)
