"""The access package's doctor lines (vault, inventory, last verify sweep, verify sandbox), registered
through the hook an outside plugin would use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from muninn.core.hookspecs import KnownValues, hookimpl
from muninn.plugins.access.store import retired_values, stored_values


@hookimpl
def register_checks(register: Callable[[Callable[..., Any]], Any]) -> None:
    from muninn.plugins.access import doctor_check, kube_values  # heavy imports: `doctor` only

    register(doctor_check.vault)
    register(doctor_check.secret_files)
    register(doctor_check.inventory)
    register(doctor_check.verify_sandbox)
    register(kube_values.doctor)


@hookimpl
def register_known_values(register: Callable[[Callable[..., Any]], Any]) -> None:
    from muninn.plugins.access import kube_values

    register(KnownValues("vault", stored_values, retired=retired_values))
    register(KnownValues("kubernetes", kube_values.cached, declared=False, keyed=True,
                         refresh=kube_values.refresh))
