"""One `muninn doctor` line. Every part's checks return these; a check never prints a secret value."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from muninn.core.config import Settings

# pending: not done yet, and `muninn up` does it (a workspace never brought up is not failing).
Level = Literal["ok", "warn", "pending", "fail"]


@dataclass
class Check:
    name: str
    level: Level
    detail: str
    fix: str = ""


CheckFn = Callable[[Settings], list[Check]]
