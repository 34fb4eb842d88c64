"""`muninn audit` (what agents and the owner did, from the MCP audit log and the access log) and
`muninn forget` (remove what an agent wrote). Memory you can inspect and correct, from the shell
only: neither is an MCP tool.

Exit codes: 0 done; 2 bad input (a URI, a folder, a --since muninn cannot read, no policy.yaml);
8 refused (an exported fact, an area no agent writes, no confirmation without --yes); 5 server.
"""

from __future__ import annotations

import sys
from enum import StrEnum

import typer
from rich.table import Table

from muninn.core.cliutil import JsonOpt, console, emit_json, say, settings
from muninn.core.errors import Refused

app = typer.Typer()


class LogChoice(StrEnum):
    mcp = "mcp"
    access = "access"
    all = "all"


@app.command("audit")
def audit_cmd(
    ctx: typer.Context,
    log: LogChoice = typer.Option(LogChoice.all, "--log", help="Which log: mcp (every MCP call and every "
                                  "`muninn forget`), access (secret and access commands), or all."),
    profile: str = typer.Option(None, "--profile", "-p", help="Only this MCP profile (or `who`, e.g. your user)."),
    tool: str = typer.Option(None, "--tool", "-t", help="Only this tool or action; a glob works (`recall_*`)."),
    denied: bool = typer.Option(False, "--denied", help="Only calls the guard denied and refused commands."),
    since: str = typer.Option(None, "--since", help="Only after this: 2h, 7d, yesterday, or an ISO date."),
    limit: int = typer.Option(100, "--limit", "-n", min=0, help="The newest N rows that pass (0: all)."),
    json_out: bool = JsonOpt,
) -> None:
    """Show what agents and the owner did: the MCP audit log and the access log, oldest first.

    A line that is not a record (a crash mid-write, a hand edit) is skipped and reported by its
    number on stderr (and under `skipped_lines` in --json); the rest is still shown.

    Examples:

    \b
      muninn audit --denied --since yesterday
      muninn audit --profile raven --tool 'recall_*' --json
      muninn audit --log access --since 2026-11-01
    """
    from muninn.plugins.mcp import audit_view

    s = settings(ctx)
    filters = audit_view.Filters(profile=profile, tool=tool, denied=denied,
                                 since=audit_view.since(since) if since is not None else None)
    view = audit_view.collect(s, log.value, filters)
    rows = view.rows[-limit:] if limit else view.rows
    for name, lines in view.bad.items():
        if lines:
            shown = ", ".join(map(str, lines[:10])) + (", …" if len(lines) > 10 else "")
            say(f"warning: {view.files[name]}: {len(lines)} corrupted line(s) skipped (line {shown})")
    if json_out:
        emit_json({"rows": audit_view.public(rows), "total": len(view.rows),
                   "logs": {k: str(v) for k, v in view.files.items()}, "skipped_lines": view.bad})
        return
    table = Table("time", "log", "who", "tool", "decision", "target", "reason")
    for r in rows:
        table.add_row(str(r["time"]), r["log"], r["who"], r["tool"], r["decision"], r["target"], r["reason"],
                      style="red" if r["decision"] == "deny" else None)
    console.print(table)
    say(f"audit: {len(rows)} of {len(view.rows)} matching row(s)"
        + (f" (the newest {limit}; --limit 0 shows all)" if limit and len(view.rows) > limit else ""))


@app.command("forget")
def forget_cmd(
    ctx: typer.Context,
    uris: list[str] = typer.Argument(..., help="viking:// URIs of fact files an agent or assistant wrote."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask (for scripts)."),
    json_out: bool = JsonOpt,
) -> None:
    """Remove facts an agent or an assistant wrote (or you remembered by mistake), after asking.

    Only files under an area agents or assistants write to (their write areas and every reader's
    `remember_to` in policy.yaml). A fact muninn exported is refused: remove it from its source and
    sync with --prune. Each removal is read back, dropped from every reader's keyword index, and
    recorded in the audit log (who, when, URI; `muninn audit --tool forget`). Never an MCP tool.

    Examples:

    \b
      muninn forget viking://resources/agents/raven/observations/2026-11/x.md
      muninn audit --tool forget
    """
    from muninn.plugins.mcp import forget

    s = settings(ctx)
    policy, targets = forget.plan(s, uris)
    for t in targets:
        say(f"forget {t.uri}" + (f"  ({t.title})" if t.title else "")
            + (f"  written by {t.written_by}" if t.written_by else ""))
    if not yes:
        if not sys.stdin.isatty():
            raise Refused("forget asks before it removes anything, and stdin is not a terminal",
                          fix="pass --yes to remove without asking")
        if not typer.confirm(f"Remove {len(targets)} fact(s) from the server?", default=False, err=True):
            raise Refused("nothing removed", fix="answer y to remove, or pass --yes")
    done = forget.remove(s, policy, targets)
    if json_out:
        emit_json({"removed": done})
    say(f"forget: {len(done)} fact(s) removed and recorded in the audit log")


@app.command("rename-remembered")
def rename_remembered_cmd(ctx: typer.Context, json_out: bool = JsonOpt) -> None:
    """Rename facts agents remembered before format 5 (`<time>-<title words>-<id>.md`) to `<time>-<id>.md`,
    so no word an agent wrote is in a name; each copy is read back before the old file goes, and every
    reader's keyword index follows. Safe to run again."""
    from muninn.core import policy as policy_mod
    from muninn.plugins.mcp import rename_remembered

    s = settings(ctx)
    done = rename_remembered.rename(s, policy_mod.load_for(s), say)
    if json_out:
        emit_json({"renamed": [{"old": r.old, "new": r.new} for r in done]})
    say(f"rename-remembered: {len(done)} fact(s) renamed")
