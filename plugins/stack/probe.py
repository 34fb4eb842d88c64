"""Is the stack usable, not only alive: /health with its latency, and a real `find` through the
server and the embedding sidecar, with OpenViking's embedding circuit breaker state.

OpenViking 0.5.2 does not expose its breaker: with the sidecar down, `find` answers UNAVAILABLE five
times, then INTERNAL ("Internal server error") for 60 s and more while the breaker is open, even once
the sidecar is back. So the probe is a real `find`; for a stack muninn runs, the server's log lines
written during that `find` say whether the breaker refused it ("Circuit breaker is OPEN, retry after
52s"). For an external server the probe reports what `find` said.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from muninn.core import credentials
from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.core.errors import MuninnError, ServerError

PROBE_QUERY = "muninn status probe"
_OPEN = re.compile(r"Circuit breaker is OPEN, retry after (\d+)s")


@dataclass
class Health:
    ok: bool
    latency_ms: float | None
    detail: str = ""


def health(url: str, timeout: float) -> Health:
    t0 = time.perf_counter()
    try:
        code = httpx.get(f"{url}/health", timeout=timeout).status_code
    except httpx.TimeoutException:
        return Health(False, None, f"/health did not answer within {timeout:g} s")
    except httpx.HTTPError as exc:
        return Health(False, None, f"/health not reachable ({type(exc).__name__})")
    ms = round((time.perf_counter() - t0) * 1000, 1)
    return Health(code == 200, ms, "" if code == 200 else f"/health answered HTTP {code}")


@dataclass
class FindProbe:
    ok: bool
    latency_ms: float | None
    breaker: str          # "closed", "open, retry after 52 s", "counting failures", "unknown"
    detail: str           # the failure, one sentence; empty when ok
    tried: bool = True    # False: no key to search with, so no find was sent


def server_log(settings: Settings) -> Path | None:
    """The log of the server muninn runs; None for an external server.url."""
    return None if settings.server.url else settings.paths.stack / "logs" / "server.log"


def _size(path: Path | None) -> int:
    try:
        return path.stat().st_size if path else 0
    except FileNotFoundError:
        return 0


def _written_since(path: Path | None, offset: int) -> str:
    if path is None:
        return ""
    try:
        with path.open("rb") as fh:
            fh.seek(offset)
            return fh.read(1_000_000).decode(errors="replace")
    except FileNotFoundError:
        return ""


def find(settings: Settings, timeout: float | None = None) -> FindProbe:
    """One real `find` as the CLI's own user (the key `muninn up` made), timed."""
    timeout = timeout or settings.search.timeout
    name = credentials.user_key_name(settings.openviking.account, settings.openviking.user)
    try:
        key = credentials.for_server(settings).get(name)
    except MuninnError as exc:
        return FindProbe(False, None, "unknown", exc.message, tried=False)
    if not key:
        return FindProbe(False, None, "unknown", f"no key {name!r} in the keyring to search with", tried=False)
    log = server_log(settings)
    offset = _size(log)
    t0 = time.perf_counter()
    try:
        with OpenViking(settings.server.base_url, key, key_name=name, timeout=timeout) as client:
            client.find(PROBE_QUERY, target_uri=settings.search.target, limit=1)
    except ServerError as exc:
        time.sleep(0.2)   # the server logs the refusal as it answers: let the line land
        opened = _OPEN.findall(_written_since(log, offset))
        if opened:
            breaker = f"open, retry after {opened[-1]} s"
        elif exc.code == "UNAVAILABLE":
            breaker = "counting failures (the embedding service is unavailable; it opens after 5)"
        else:
            breaker = "unknown"
        return FindProbe(False, None, breaker, f"a real find failed: {exc}")
    ms = round((time.perf_counter() - t0) * 1000, 1)
    return FindProbe(True, ms, "closed", "")
