"""Claude Code's PreToolUse hook (matcher Bash): before a risky command, what memory holds about past attempts.

    python -S .../muninn/plugins/mcp/risky_hook.py --profile assistant [--policy FILE]

`muninn mcp install --client claude` writes that line (with the environment the MCP server gets). Claude
Code pipes the call in: `session_id`, `cwd`, `hook_event_name`, `tool_name`, `tool_input.command`.

Every Bash call passes here, so this file is the pre-filter: it runs under `python -S` (no site-packages,
no muninn package, only the standard library and the classifier read from its file), classifies the
command and exits 0 with no output when it is harmless. Only a risky one loads muninn (`site.main()`
then risky_recall), which asks the reader's warm search process under a hard budget and prints the
hook's JSON. It informs and never blocks or approves: whatever happens, the exit code is 0 and a
failure prints nothing (the call goes on through Claude Code's own permission flow).
"""

from __future__ import annotations

import json
import os
import sys

MAX_PAYLOAD = 1 << 20
BUDGET_S = 1.5      # for the warm search's answer (MUNINN_HOOK_BUDGET overrides); HOOK_TIMEOUT_S bounds the call
HOOK_TIMEOUT_S = 10

if __name__ == "__main__" and sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    del sys.path[0]   # this folder's modules (audit, server, session...) must not shadow top-level names

try:   # imported as a package (python -m, tests)
    from muninn.guards.command import risky
except ImportError:   # run as a file under `python -S`: the classifier from its file, beside this package's
    _HERE = os.path.dirname(os.path.abspath(__file__))
    sys.path.append(os.path.join(os.path.dirname(os.path.dirname(_HERE)), "guards", "command"))
    import risky  # type: ignore[no-redef]


def command_of(payload: object) -> str | None:
    """The Bash command of a PreToolUse payload, or None for anything else."""
    if not isinstance(payload, dict) or payload.get("tool_name") != "Bash":
        return None
    if payload.get("hook_event_name") not in (None, "PreToolUse"):
        return None
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    return command if isinstance(command, str) and command.strip() else None


def _note(why: str) -> None:
    """Why nothing was handed over, on stderr, only with MUNINN_HOOK_DEBUG=1 (Claude Code shows a hook's stderr)."""
    if os.environ.get("MUNINN_HOOK_DEBUG") == "1":
        sys.stderr.write(f"muninn risky hook: {why}\n")


def _options(argv: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for i, word in enumerate(argv):
        if word in ("--profile", "--policy", "--budget") and i + 1 < len(argv):
            out[word[2:]] = argv[i + 1]
    return out


def main(argv: list[str] | None = None) -> int:
    try:
        payload = json.loads(sys.stdin.buffer.read(MAX_PAYLOAD) or b"{}")
        command = command_of(payload)
        risk = risky.classify(command) if command else None
        if risk is None:
            return 0
        options = _options(sys.argv[1:] if argv is None else argv)
        if not options.get("profile"):
            return 0
        if sys.flags.no_site:   # risky: now the interpreter as usual (site-packages, muninn)
            import site

            site.main()
        from muninn.plugins.mcp import risky_recall

        out = risky_recall.recall(payload, command, risk, options["profile"], options.get("policy"),
                                  float(options.get("budget") or os.environ.get("MUNINN_HOOK_BUDGET") or BUDGET_S),
                                  note=_note)
        if out is not None:
            sys.stdout.write(json.dumps(out, ensure_ascii=False))
            sys.stdout.flush()
    except BaseException as exc:   # the edge of a hook that informs: silence, and the call goes on
        _note(f"{type(exc).__name__}: {exc}")
        return 0
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)   # no interpreter teardown: a risky call may leave a thread behind, a harmless one has none
