"""Prerequisites: a `vpn`-style entry whose check is a 3-second TCP connect to host:port.

Behind a disconnected VPN most internal services answer 403 rather than time out, and an agent
reads a 403 as a revoked token. So dependants are checked first and fail fast with one sentence
the agent can act on, before any step or credential is touched.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from muninn.core.errors import ExitCode, MuninnError
from muninn.core.inventory_file import InventoryEntry, Located

TIMEOUT = 3.0


class PrerequisiteDown(MuninnError):
    """A prerequisite (VPN, jump host) does not answer. The message is the whole instruction."""

    exit_code = ExitCode.PREREQUISITE_DOWN

    def __init__(self, entry: InventoryEntry, detail: str) -> None:
        self.prerequisite = entry.id
        self.detail = detail
        super().__init__(f"prerequisite '{entry.id}' is down: {entry.fix_sentence()}")


@dataclass(frozen=True)
class PrereqStatus:
    id: str
    up: bool
    detail: str


def tcp_check(host: str, port: int, timeout: float = TIMEOUT) -> tuple[bool, str]:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True, f"tcp {host}:{port} connected"
    except TimeoutError:
        return False, f"tcp {host}:{port} timed out after {timeout:g}s"
    except OSError as exc:
        return False, f"tcp {host}:{port}: {exc.strerror or exc}"


def check(entry: InventoryEntry, timeout: float = TIMEOUT) -> PrereqStatus:
    host, port = entry.address
    up, detail = tcp_check(host, port, timeout)
    return PrereqStatus(entry.id, up, detail)


def required_by(entries: Mapping[str, Located], entry_id: str) -> list[str]:
    """Prerequisite ids of an entry, its account chain included, in order, each once."""
    out: list[str] = []
    current: str | None = entry_id
    while current:
        entry = entries[current].entry
        for req in entry.requires:
            if req not in out:
                out.append(req)
        current = entry.account
    return out


def check_many(entries: Mapping[str, Located], ids: Iterable[str], timeout: float = TIMEOUT) -> dict[str, PrereqStatus]:
    """Each prerequisite once, in parallel: the sweep's cost is one timeout, not one per entry."""
    ids = list(dict.fromkeys(ids))
    if not ids:
        return {}
    with ThreadPoolExecutor(max_workers=min(16, len(ids))) as pool:
        results = pool.map(lambda i: check(entries[i].entry, timeout), ids)
        return {s.id: s for s in results}


def require(entries: Mapping[str, Located], entry_id: str, timeout: float = TIMEOUT) -> None:
    """Raise PrerequisiteDown for the first prerequisite of `entry_id` that is down."""
    statuses = check_many(entries, required_by(entries, entry_id), timeout)
    for status in statuses.values():
        if not status.up:
            raise PrerequisiteDown(entries[status.id].entry, status.detail)
