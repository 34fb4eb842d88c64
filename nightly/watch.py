"""`muninn watch`: the observation log kept findable between nights. A foreground loop (a systemd user
unit or launchd keeps it running; `--once` is the session-end hook) that exports every `observations`
source and syncs the areas whose export changed; sync's hook puts the new calls into every reader's
keyword index. Each cycle says how old the newest observation an agent can find is: the measure of
whether the log is fresh enough.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import time
from collections.abc import Callable
from typing import Any

from muninn.core import atomic
from muninn.core.config import Settings
from muninn.core.errors import ConfigError
from muninn.export import pipeline
from muninn.nightly.jobs import refresh

KIND = "observations"


def observation_areas(settings: Settings) -> list[str]:
    areas = sorted({c.area for c in pipeline.configured(settings) if c.kind == KIND}) if settings.sources else []
    if not areas:
        raise ConfigError("no `observations` source under `sources:`", path=str(settings.source_file or "muninn.yaml"),
                          fix="add {kind: observations, path: <log.jsonl>, area: viking://resources/agents/<name>}")
    return areas


def _parse(date: str | None) -> dt.datetime | None:
    if not date:
        return None
    try:
        parsed = dt.datetime.fromisoformat(date.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def newest_findable(settings: Settings, areas: list[str]) -> dict[str, dict[str, Any]]:
    """Per area: the files in the configured identity's keyword index, the newest observation's date,
    and its age in seconds now (None when the area holds none)."""
    from muninn.plugins.search import keyword

    index = settings.paths.search_index()
    now = dt.datetime.now(dt.UTC)
    out: dict[str, dict[str, Any]] = {}
    for area in areas:
        count, newest = keyword.area_stats(index, area) if index.exists() else (0, None)
        when = _parse(newest)
        out[area] = {"files": count, "newest": newest,
                     "age_seconds": round((now - when).total_seconds()) if when else None}
    return out


def ledger_digest(settings: Settings, area: str) -> str:
    """The export ledgers of an area (every file and its hash): equal digests, nothing new to sync."""
    digest = hashlib.sha256()
    for ledger in sorted(pipeline.area_dir(settings, area).rglob(f"{pipeline.LEDGER_DIR}/*.json")):
        digest.update(ledger.read_bytes())
    return digest.hexdigest()


def cycle(settings: Settings) -> dict[str, Any]:
    """One export + sync of the observation sources. An area is synced only when its export differs from
    what the last successful sync of `watch` sent (kept in a state file, so a run killed between export
    and sync still syncs next time): the walk of a big area every minute would cost more than the log."""
    areas = observation_areas(settings)
    t = time.perf_counter()
    reports = pipeline.run_all(settings, kinds=lambda kind: kind == KIND, keep_going=True)
    state_file = settings.paths.watch_state
    state = json.loads(state_file.read_text()) if state_file.exists() else {}
    digests = {area: ledger_digest(settings, area) for area in areas}
    changed = [area for area in areas if state.get(area) != digests[area]]
    data: dict[str, Any] = {}
    failures = [f"export {name}: {exc.message}" for name, exc in pipeline.failed(reports).items()]
    failures += [f"export {name}: the leak gate dropped {d['path']}" for name, r in reports.items() for d in r.dropped]
    refresh.sync_areas(settings, changed, data, failures)
    synced_clean = {a for a, r in data.get("synced", {}).items() if not r["missing"]}
    if synced_clean:
        state.update({a: digests[a] for a in synced_clean})
        atomic.write_text(state_file, json.dumps(state, indent=1))
    return {"written": sum(r.written for r in reports.values()), "synced": data.get("synced", {}),
            "failures": failures, "seconds": round(time.perf_counter() - t, 2),
            "findable": newest_findable(settings, areas)}


def line(result: dict[str, Any]) -> str:
    ages = [f"{area.removeprefix('viking://resources/')}: "
            + (f"newest findable {v['age_seconds']} s old" if v["age_seconds"] is not None else "none findable")
            for area, v in result["findable"].items()]
    head = f"{result['written']} written, {len(result['synced'])} area(s) synced in {result['seconds']} s"
    return "; ".join([head, *ages, *result["failures"]])


def loop(settings: Settings, interval: float, once: bool, emit: Callable[[dict[str, Any]], None],
         sleep: Callable[[float], None] = time.sleep) -> int:
    """Run cycles until interrupted (or one, with `once`). Returns the number of cycles that failed."""
    failed = 0
    while True:
        result = cycle(settings)
        failed += bool(result["failures"])
        emit(result)
        if once:
            return failed
        sleep(interval)
