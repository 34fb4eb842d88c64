"""The job registry and the shared context every job gets."""

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
    options: dict[str, Any] = field(default_factory=dict)


JobFn = Callable[[Context], JobResult]
JOBS: dict[str, JobFn] = {}


def job(name: str) -> Callable[[JobFn], JobFn]:
    def register(fn: JobFn) -> JobFn:
        JOBS[name] = fn
        return fn
    return register
