"""What a nightly job is given and returns. Jobs are registered through the `register_jobs` hook
(muninn.nightly.plugin for the built-in ones, in the order they run)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from muninn.core.config import Settings


@dataclass
class JobResult:
    name: str
    ok: bool
    detail: str
    data: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


@dataclass
class Context:
    settings: Settings


JobFn = Callable[[Context], JobResult]
