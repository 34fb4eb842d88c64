"""`muninn observe`: Claude Code's hook command (PostToolUse: one line of the observation log; SessionEnd:
one `muninn watch` cycle). `muninn mcp install --client claude --record` puts it into ~/.claude/settings.json."""

from __future__ import annotations

import json
import sys

import typer

from muninn.core.cliutil import settings

app = typer.Typer()


@app.command("observe")
def observe_cmd(
    ctx: typer.Context,
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Say on stderr what was recorded."),
) -> None:
    """Read one hook payload (JSON) on stdin and record it: a tool call (PostToolUse: `tool_name`,
    `tool_input`, `tool_response`, `session_id`, `cwd`, `tool_use_id`) becomes one line of the
    `observations` source's log, stamped with the time now, its input and output redacted and capped
    before anything is written; a SessionEnd payload runs one `muninn watch --once` cycle.

    Always exit 0, whatever happens: a hook that exits 2 has its stderr fed to the model. A failure
    is one sentence on stderr; the tool call itself is never held up.
    """
    from muninn.nightly import observe

    # The edge of a hook: nothing below may end it with another code or a traceback.
    try:
        raw = sys.stdin.buffer.read()
        payload = json.loads(raw.decode("utf-8", "replace")) if raw.strip() else {}
        if not isinstance(payload, dict):
            raise ValueError("the payload is not a JSON object")
        said = observe.observe(settings(ctx), payload)
        if verbose:
            sys.stderr.write(f"muninn observe: {said}\n")
    except Exception as exc:   # the hook's edge (see above): a hook must exit 0
        sys.stderr.write(f"muninn observe: nothing recorded: {_sentence(exc)}\n")
    raise typer.Exit(0)


def _sentence(exc: Exception) -> str:
    from muninn.core.errors import MuninnError

    if isinstance(exc, MuninnError):
        return str(exc)
    if isinstance(exc, json.JSONDecodeError):
        return f"stdin is not JSON ({exc.msg})"
    return f"{type(exc).__name__}: {exc}"
