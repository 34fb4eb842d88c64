"""What a search says when OpenViking cannot give its vector candidates: which part failed (the
embedding sidecar, the server, its circuit breaker, a bad reply, a timeout) and how to fix it.

The search itself goes on from the local keyword index (stages/vector.py); these sentences are
its warning. They name the part by URL, since the sidecar's death reaches the client only as
OpenViking's "Service unavailable" or "Internal server error", which never names it.
"""

from __future__ import annotations

import time

from muninn.core.config import Settings
from muninn.core.errors import ServerBadReply, ServerDown, ServerError, ServerSlow

FALLBACK = "vector stage skipped, answered from the local keyword index only"
# OpenViking's codes for a failed query embedding: UNAVAILABLE while its upstream (the sidecar)
# refuses connections, then INTERNAL once its circuit breaker is open (5 failures, 60 s and more).
EMBED_CODES = frozenset({"UNAVAILABLE", "INTERNAL", "DEADLINE_EXCEEDED"})
SIDECAR_PROBE_S = 1.0


def sidecar_answers(settings: Settings, timeout: float = SIDECAR_PROBE_S) -> bool:
    import httpx  # here: `muninn search` answered by `muninn serve` imports the stage list, not the clients

    try:
        return httpx.get(f"{settings.embed.base_url}/health", timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


def _start_fix(settings: Settings) -> str:
    if settings.server.url:
        return f"check that the server at {settings.server.url} runs (server.url in muninn.yaml)"
    return "`muninn up` starts it; `muninn status` says what runs"


def reason(exc: ServerError, settings: Settings, timeout: float) -> str:
    """One clause naming the failed part and its fix."""
    url = settings.server.base_url
    if isinstance(exc, ServerDown):
        return f"OpenViking at {url} is not reachable ({_start_fix(settings)})"
    if isinstance(exc, ServerSlow):
        return (f"OpenViking at {url} did not answer within search.timeout ({timeout:g} s) "
                "(raise search.timeout in muninn.yaml if the machine is only busy; `muninn status` shows "
                "the server's latency)")
    if isinstance(exc, ServerBadReply):
        return str(exc)
    if exc.code in EMBED_CODES and not settings.server.url and not sidecar_answers(settings):
        return (f"the embedding sidecar at {settings.embed.base_url} is not answering, so OpenViking cannot "
                "embed the question (`muninn up` restarts it and waits until OpenViking's circuit breaker "
                "lets searches through again)")
    if exc.code in EMBED_CODES:
        return (f"OpenViking at {url} could not embed the question: {exc.message} (if the embedding "
                "sidecar was restarted in the last minutes, OpenViking's circuit breaker may still be open: "
                "`muninn status` shows its state; `muninn up` waits for it)")
    return str(exc)


def warning(exc: ServerError, settings: Settings, timeout: float) -> str:
    return f"{FALLBACK}: {reason(exc, settings, timeout)}"


class ServerWatch:
    """Whether the server answered lately: an identifier search never calls it, so it asks /health
    (at most once per `every` seconds in a long-lived process) to say when its answer is keyword-only
    because the server is away."""

    def __init__(self, every: float = 15.0, timeout: float = 2.0) -> None:
        self.every, self.timeout = every, timeout
        self._ok_at = float("-inf")

    def saw_ok(self) -> None:
        self._ok_at = time.monotonic()

    def problem(self, client, settings: Settings) -> str | None:
        if time.monotonic() - self._ok_at < self.every:
            return None
        try:
            client.health(timeout=self.timeout)
        except ServerSlow:
            return (f"OpenViking at {client.url} did not answer /health within {self.timeout:g} s: this identifier "
                    "search answered from the local keyword index alone, which holds what was synced before "
                    "(`muninn status` shows the server's latency)")
        except ServerError as exc:
            return (f"this identifier search answered from the local keyword index alone, which holds what was "
                    f"synced before: {reason(exc, settings, self.timeout)}")
        self.saw_ok()
        return None
