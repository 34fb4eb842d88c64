"""Everything one `muninn mcp --profile NAME` process knows: the profile, its OpenViking identity,
the redactor, the audit log, and the history-only counter behind the nudge.

Handlers ask `require(uri, access)` for every URI they touch and use the canonical URI it
returns, so what was checked is what reaches the server. Every text that leaves goes through
`finish()`: untrusted content is labelled first, then everything is redacted by value.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from muninn.core import policy as policy_mod
from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.core.errors import Refused
from muninn.core.policy import Policy, Profile
from muninn.guards.policy import label as label_mod
from muninn.guards.policy import tools as tool_guard
from muninn.plugins.mcp.audit import AuditLog
from muninn.plugins.mcp.redaction import ValueRedactor

OUTSIDE_PREFIX = "outside:"     # muninn.plugins.search.outside.memories.PREFIX, without importing it at start

NUDGE = ("Memory is history. You have searched it {n} times in a row: for the current state of a "
         "service, host or pipeline, check it live (recall_access_exec, recall_verify, or its own status "
         "command) instead of searching again.")


def _set(event: threading.Event) -> threading.Event:
    event.set()
    return event


@dataclass
class GuardSession:
    settings: Settings
    policy: Policy
    profile: Profile
    redactor: ValueRedactor
    audit: AuditLog
    _client: OpenViking | None = None
    _searcher: Any = None
    history_streak: int = 0
    notes: list[str] = field(default_factory=list)
    index_problem: str | None = None   # why this reader's keyword index may be incomplete (said in results)
    _outside: list[Any] | None = None
    # The client and the searcher are built once: by the warm-up thread or by the first call, whichever
    # comes first (the other waits for it, so the reranker is never loaded twice).
    _build_lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    # Set when no warm-up runs. A search waits for a running warm-up: both import numpy and the model
    # runtimes, and two threads importing the same C extension at once can meet it half initialised
    # ("cannot import name ... from partially initialized module"), which failed a first search.
    _warm: threading.Event = field(default_factory=lambda: _set(threading.Event()), repr=False)

    @classmethod
    def open(cls, settings: Settings, profile: str, policy_path: Path | None = None) -> GuardSession:
        pol = policy_mod.load_for(settings, policy_path)
        prof = pol.profile(profile)
        redactor = ValueRedactor.from_settings(settings)
        return cls(settings=settings, policy=pol, profile=prof, redactor=redactor,
                   # Values and patterns: an argument is whatever the agent typed, never pre-redacted.
                   audit=AuditLog(settings.paths.audit_log, redactor.scrub_all))

    @property
    def client(self) -> OpenViking:
        """The profile's own OpenViking identity, from the keyring: never the owner's or the root key."""
        with self._build_lock:
            if self._client is None:
                self._client = OpenViking.user(self.settings, self.profile.account, self.profile.user)
            return self._client

    @property
    def searcher(self) -> Any:
        """The search pipeline, kept for the session (it holds the reranker and the content cache),
        as this profile's identity and with this identity's own keyword index."""
        with self._build_lock:
            if self._searcher is None:
                from muninn.plugins.search import reader_index
                from muninn.plugins.search.pipeline import Searcher

                self._searcher = Searcher(self.settings, client=self.client,
                                          index=reader_index.index_path(self.settings, self.profile),
                                          index_fix=reader_index.fix_command(self.profile),
                                          readable=self.readable)
            return self._searcher

    def warm_up(self) -> None:
        """Open the keyword index and load the reranker now, not at the agent's first search (which
        waits for this if it comes first). A failure here is left for that search to report. A reader
        without recall_search loads nothing."""
        if not tool_guard.check_tool(self.profile, "recall_search").allowed:
            return
        with contextlib.suppress(Exception):   # the same failure reaches the first search, which reports it
            self.searcher.warm_up()

    def warm_up_in_background(self) -> threading.Thread:
        self._warm.clear()
        thread = threading.Thread(target=self._warm_up_then_signal, name="muninn-mcp-warm-up", daemon=True)
        thread.start()
        return thread

    def _warm_up_then_signal(self) -> None:
        try:
            self.warm_up()
        finally:
            self._warm.set()

    def ready_searcher(self) -> Any:
        """The searcher, once a running warm-up has finished (a search never races its imports)."""
        self._warm.wait()
        return self.searcher

    def refresh_index(self) -> None:
        """Bring this reader's keyword index up to date at start, with its own key, incrementally."""
        from muninn.plugins.search import reader_index

        self.index_problem = reader_index.refresh_quietly(self.settings, self.profile, self.client)

    def indexed(self, written: dict[str, str]) -> None:
        """A file this server just wrote: into its own index and every other reader's that may read it."""
        from muninn.plugins.search import reader_index

        reader_index.after_write(self.settings, written, [], self.policy, own=False)

    def close(self) -> None:
        if self._searcher is not None:
            self._searcher.close()
        if self._client is not None:
            self._client.close()
        self.audit.close()

    # --- checks ---

    def require(self, tool: str, uri: str, access: str) -> str:
        decision = tool_guard.check_call(self.profile, tool, uri, access)
        if not decision.allowed or decision.canonical_uri is None:
            raise Refused(decision.reason)
        return decision.canonical_uri

    def readable(self, uri: str) -> bool:
        return self.profile.may("read", uri)

    # --- outputs ---

    def label(self, text: str, uri: str) -> str:
        writers = self._writers(uri)
        return label_mod.wrap(text, uri, writers) if writers else text

    def untrusted(self, uri: str) -> bool:
        return bool(self._writers(uri))

    def _writers(self, uri: str) -> list[str]:
        if uri.startswith(OUTSIDE_PREFIX):
            # Another tool's memory: data, unless the owner marked it as their own writing (`trusted: true`).
            name = uri[len(OUTSIDE_PREFIX):].split("/", 1)[0]
            trusted = any(o.name == name and o.trusted for o in self.settings.outside)
            return [] if trusted else [f"{name} (outside memory)"]
        return [w for w in self.policy.untrusted_writers(uri) if w != self.profile.name]

    # --- outside memories ---

    @property
    def outside(self) -> list[Any]:
        """The outside memories this reader may query (its policy's `outside:`), in muninn.yaml's order."""
        if self._outside is None:
            from muninn.plugins.search.outside import memories

            self._outside = memories.declared(self.settings, self.profile.outside_memories)
        return self._outside

    def scrub_outside(self, text: str) -> str:
        return self.redactor.scrub_outside(text, self.settings)

    def scrub_data(self, data: Any) -> Any:
        if isinstance(data, str):
            return self.redactor.scrub(data)
        if isinstance(data, dict):
            return {k: self.scrub_data(v) for k, v in data.items()}
        if isinstance(data, list):
            return [self.scrub_data(v) for v in data]
        return data

    def note_call(self, tool: str, live: bool) -> str | None:
        """Track history-only searches; return the nudge once the streak reaches the threshold."""
        if live:
            self.history_streak = 0
            return None
        if tool != "recall_search":
            return None
        self.history_streak += 1
        if self.history_streak >= self.settings.guard.nudge_after:
            return NUDGE.format(n=self.history_streak)
        return None
