"""What a nightly job is given and returns. Jobs are registered through the `register_jobs` hook
(muninn.nightly.plugin for the built-in ones, in the order they run).

A job returns a `JobResult` whose `status` is one of:
- `ok`: nothing found;
- `warn`: nothing wrong, but something could not be checked this time (a VPN that is down): the
  run still exits 0, and the report says what was skipped;
- `findings`: drift, a leak, a lost file: the run exits 1;
- `error`: the job could not run (it raised): the run exits `ExitCode.JOB_FAILED`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from muninn.core.config import Settings

Status = Literal["ok", "warn", "findings", "error"]


@dataclass
class JobResult:
    name: str
    ok: bool
    detail: str
    data: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    status: Status | None = None  # derived from `ok` when a job does not set it

    def __post_init__(self) -> None:
        if self.status is None:
            self.status = "ok" if self.ok else "findings"
        self.ok = self.status in ("ok", "warn")


@dataclass
class Context:
    settings: Settings


JobFn = Callable[[Context], JobResult]
