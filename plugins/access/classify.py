"""Turn a proof command's exit code and (masked) output into one status with a reason.

- ok: exit 0.
- missing: the context, profile, subscription, env script or binary does not exist here.
- unreachable: a network error (DNS, refused, timeout, TLS): not the credential's fault.
- stale: an authentication error: log in again or rotate.
- failed: none of the above; the reason carries the command's own last line to read.

`failed` is muninn's addition to the four statuses of the design: an unrecognised error filed
under `stale` would send an agent off rotating a good credential, which is the failure the
prerequisite check exists to prevent.
"""

from __future__ import annotations

import re

_MISSING = [
    r'context "[^"]*" does not exist', r"no context exists with the name", r"context was not found",
    r"config profile \([^)]*\) could not be found", r"profile [^ ]+ could not be found",
    r"subscription .{0,80}(?:not found|does not exist|doesn't exist|could not be found)",
    r"command not found", r"no such file or directory", r"error loading config file",
    r"returned error: 404", r"could not find (?:the )?(?:profile|context|project)",
]
_UNREACHABLE = [
    r"unable to connect to the server", r"dial tcp", r"i/o timeout", r"connection refused", r"connection timed out",
    r"no route to host", r"could not resolve", r"name or service not known", r"temporary failure in name resolution",
    r"could not connect to the endpoint url", r"connect timeout", r"network is unreachable",
    r"tls handshake timeout", r"connection reset", r"failed to connect to", r"operation timed out",
    r"^curl: \((?:6|7|28|35|52|56)\)",
]
_STALE = [
    r"unauthorized", r"you must be logged in", r"returned error: 40[13]", r"\b401\b", r"expiredtoken",
    r"token (?:has )?expired", r"session .{0,40}(?:has )?expired", r"invalidclienttokenid",
    r"unrecognizedclientexception", r"unable to locate credentials", r"permission denied \((?:publickey|password)",
    r"authentication failed", r"incorrect password", r"a password is required", r"sorry, try again",
    r"aadsts\d+", r"az login", r"invalid_grant", r"signaturedoesnotmatch", r"accessdenied", r"forbidden",
    r"credentials (?:have|has) expired", r"re-?authenticate", r"login required",
]

_HINTS = {
    "missing": "absent on this machine",
    "unreachable": "network error, not the credential's fault",
    "stale": "authentication error: log in again or rotate",
}


def _first(patterns: list[str], lines: list[str]) -> str | None:
    for line in lines:
        low = line.lower()
        if any(re.search(p, low) for p in patterns):
            return line.strip()
    return None


def _http(code: int) -> tuple[str, str]:
    if code < 400:
        return "ok", f"HTTP {code}"
    if code in (401, 403):
        return "stale", f"{_HINTS['stale']}: HTTP {code}"
    if code == 404:
        return "missing", f"{_HINTS['missing']}: HTTP 404"
    return "failed", f"HTTP {code} from the service"


def classify(exit_code: int, output: str, timed_out: bool = False, timeout: float | None = None,
             command: str | None = None) -> tuple[str, str]:
    """(status, reason). `output` is stderr then stdout, already masked."""
    lines = [line for line in output.splitlines() if line.strip()]
    if timed_out:
        return "unreachable", f"no answer within {timeout:g} s (network or a hung login prompt)" if timeout \
            else "timed out"
    if exit_code == 0:
        # `curl -w '%{http_code}'` without -f exits 0 on a 401: read the code it printed.
        code = lines[-1].strip() if lines and command and command.lstrip().startswith("curl") else ""
        if re.fullmatch(r"[1-5]\d\d", code):
            return _http(int(code))
        return "ok", (lines[-1].strip()[:160] if lines else "exit 0")
    if exit_code == 127:
        return "missing", f"{_HINTS['missing']}: {(lines[-1] if lines else 'command not found').strip()[:200]}"
    for status, patterns in (("missing", _MISSING), ("unreachable", _UNREACHABLE), ("stale", _STALE)):
        line = _first(patterns, lines)
        if line:
            return status, f"{_HINTS[status]}: {line[:200]}"
    last = lines[-1].strip()[:200] if lines else "no output"
    return "failed", f"exit {exit_code}, unrecognised error: {last}"
