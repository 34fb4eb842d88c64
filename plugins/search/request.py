"""What one search asks for, resolved once: the settings' defaults plus the call's overrides.

A stage that can be switched off declares a `Switch`; the request holds one on/off per switch, so
the CLI flags (`--no-<name>`), the MCP parameters and `Searcher.search(**switches)` all come from
the stage list instead of being written out in each of them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from muninn.core.config import SearchSettings
from muninn.plugins.search.types import SearchError


@dataclass(frozen=True)
class Switch:
    """A setting that turns a stage on or off: `--no-<name>` on the CLI, `<name>=False` per call."""

    name: str
    help: str
    setting: Callable[[SearchSettings], bool] | None = None   # default: the `search.<name>` setting
    agent: bool = False     # offered to agents as a recall_search parameter

    def default(self, cfg: SearchSettings) -> bool:
        return bool(self.setting(cfg) if self.setting else getattr(cfg, self.name))


@dataclass(frozen=True)
class SearchRequest:
    text: str
    k: int
    targets: tuple[str, ...]    # the folders searched: one ranking over all of them, none inside another
    now: dt.datetime
    since_at: dt.datetime | None
    briefing: bool
    tokens: int
    min_score: float | None = None
    switches: Mapping[str, bool] = field(default_factory=dict)

    def on(self, switch: str) -> bool:
        return self.switches[switch]

    @classmethod
    def resolve(cls, cfg: SearchSettings, declared: Iterable[Switch], text: str, *, k: int | None = None,
                target: str | Sequence[str] | None = None, since: str | None = None, briefing: bool = False,
                tokens: int | None = None, now: dt.datetime | None = None, min_score: float | None = None,
                overrides: Mapping[str, bool | None] | None = None) -> SearchRequest:
        """`None` for any argument or override means "as configured in muninn.yaml"."""
        text = text.strip()
        if not text:
            raise SearchError("empty query", fix="pass the words or identifier to look for")
        if k is not None and k < 1:
            raise SearchError(f"k must be 1 or more, not {k}", fix="ask for at least one hit, e.g. -k 4")
        if min_score is not None and not 0 <= min_score <= 1:
            raise SearchError(f"--min-score must be between 0 and 1 (a relevance), not {min_score}")
        now = now or dt.datetime.now(dt.UTC)
        since_at = None
        if since:
            since_at = parse_since(since, now)
            if since_at is None:
                raise SearchError(f"--since {since!r} is neither a span (7d, 24h, 30m, 2w) nor an ISO date")
        switches = {s.name: s.default(cfg) for s in declared}
        for name, value in (overrides or {}).items():
            if name not in switches:
                raise TypeError(f"search() got an unknown switch {name!r}; the stages switch {sorted(switches)}")
            if value is not None:
                switches[name] = bool(value)
        return cls(text=text, k=k or cfg.k, targets=targets_of(target, cfg.target), now=now, since_at=since_at,
                   briefing=briefing, tokens=tokens or cfg.briefing_tokens, min_score=min_score,
                   switches=switches)


def targets_of(target: str | Sequence[str] | None, default: str) -> tuple[str, ...]:
    """The folders to search, each once: a folder inside another given folder is already searched
    with it. None or an empty list: `default` (search.target)."""
    given = [target] if isinstance(target, str) else list(target or [])
    folders = list(dict.fromkeys(t.rstrip("/") for t in given if t and t.strip("/"))) or [default.rstrip("/")]
    return tuple(f for f in folders if not any(f.startswith(o + "/") for o in folders if o != f))


_SINCE = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_since(value: str, now: dt.datetime | None = None) -> dt.datetime | None:
    """`7d`, `24h`, `30m`, `2w` or an ISO date/datetime; None when it is neither."""
    now = now or dt.datetime.now(dt.UTC)
    value = value.strip()
    if value[:-1].isdigit() and value[-1:].lower() in _SINCE:
        return now - dt.timedelta(seconds=int(value[:-1]) * _SINCE[value[-1].lower()])
    try:
        when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)
