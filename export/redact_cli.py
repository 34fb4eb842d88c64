"""`muninn redact allow | list | remove | review`: the owner's allowlist of pattern false positives,
and every redaction of the last export at its source line plus the server scan's undeclared secrets
(`review`; muninn.guards.undeclared.review keeps the file, export/source_lines.py finds the lines)
(muninn.guards.redact.allowlist owns the allowlist; settings.paths.redact_allowlist says where it is).

Exit codes: 0 done; 2 bad input (not a fingerprint, an unreadable allowlist); 8 refused (a known
secret value, or a name that is not a pattern rule: known values are never allowlisted).
"""

from __future__ import annotations

import typer
from rich.table import Table

from muninn.core.cliutil import JsonOpt, console, emit_json, say, settings
from muninn.core.errors import ConfigError, Refused

app = typer.Typer(name="redact", no_args_is_help=True,
                  help="Pattern hits you have judged not to be secrets, by fingerprint (never by a comment in a "
                       "note, never a known secret value).")


def _allowlist(ctx: typer.Context):
    from muninn.guards.redact.allowlist import Allowlist

    return Allowlist.load(settings(ctx).paths.redact_allowlist)


@app.command("allow")
def allow(
    ctx: typer.Context,
    fingerprints: list[str] = typer.Argument(..., help="RULE:HASH, as `muninn export` printed it."),
    note: str = typer.Option("", "--note", help="Why it is not a secret (kept in the file)."),
    json_out: bool = JsonOpt,
) -> None:
    """Allow a pattern hit that is not a secret: its rule and exact text are no longer redacted.

    Copy the fingerprint from the export summary or `muninn export … --json` (`redactions`). The
    export and the leak gate both honour the file; the next export writes the text as it is.
    Known secret values are refused whatever the fingerprint.

    Examples:

    \b
      muninn redact allow auth-header:af1f9b7a39b3511c748ef620 --note "docs: fixture token"
      muninn redact list
    """
    from muninn.guards.known import secret_values
    from muninn.guards.redact.patterns import rule_names

    s = settings(ctx)
    allowlist = _allowlist(ctx)
    known = secret_values.known(s)
    rules = rule_names()
    added: list[str] = []
    for fp in fingerprints:   # every one is checked before the file changes
        why = allowlist.refusal(fp.strip(), rules, known)
        if why is not None:
            raise (ConfigError(why) if "not a fingerprint" in why or "no export" in why
                   else Refused(why))
    for fp in fingerprints:
        if allowlist.add(fp.strip(), note):
            added.append(fp.strip())
    allowlist.save()
    if json_out:
        emit_json({"added": added, "file": str(allowlist.path), "allowed": len(allowlist.entries)})
        return
    say(f"allowed {len(added)} new fingerprint(s) in {allowlist.path} ({len(allowlist.entries)} in all)")


@app.command("remove")
def remove(ctx: typer.Context,
           fingerprints: list[str] = typer.Argument(..., help="RULE:HASH to stop allowing.")) -> None:
    """Stop allowing fingerprints: their text is redacted again from the next export."""
    allowlist = _allowlist(ctx)
    gone = [fp for fp in fingerprints if allowlist.remove(fp.strip())]
    if allowlist.salt is not None:
        allowlist.save()
    say(f"removed {len(gone)} fingerprint(s) from {allowlist.path}")


@app.command("review")
def review_cmd(ctx: typer.Context, json_out: bool = JsonOpt) -> None:
    """Every redaction of the last export, at its place in your source (file and line), and the undeclared
    secrets the last `muninn leak scan` found on the server. The rule (a pattern hit, with the fingerprint
    to allow it by) or the secret id (a known value); never the value, never the matched text.

    Each pattern hit is either a secret (declare it, `muninn secret add NAME`, so every form of it is
    redacted and the server purge removes it; better still, move it out of the note) or not (allow it,
    `muninn redact allow FINGERPRINT`). A known value is declared already: it is redacted wherever it is,
    and the note still holds it. `line ?`: the line could not be told for certain (a task row, a log, a
    text the source rewrote); the fact file and its line are in --json (`fact`, `fact_line`).
    """
    from muninn.guards.undeclared import review

    s = settings(ctx)
    data = review.load(s)
    allowlist = _allowlist(ctx)
    rows = [{"where": part, **e, "allowed": e.get("fingerprint") in allowlist.entries}
            for part in review.PARTS for e in data[part]]
    if json_out:
        emit_json({"file": str(review.path_for(s)), "found": rows})
        return
    table = Table("where", "file", "line", "rule or secret", "fingerprint")
    for r in rows:
        name = r.get("secret_id") or r.get("rule") or ""
        if r.get("kind") == "value":
            name = f"secret {name}"
        elif r.get("kind") == "value-in-path":
            name = "a known value (in the file's name)"
        fp = (r.get("fingerprint") or "") + (" (allowed)" if r["allowed"] else "")
        times = f" ×{r['count']}" if r.get("count", 1) > 1 else ""
        table.add_row(r["where"], r["file"], "?" if r.get("line") is None else str(r["line"]), name + times, fp)
    console.print(table)
    patterns = [r for r in rows if r.get("kind") == "pattern" and not r["allowed"]]
    values = sum(r.get("kind") != "pattern" for r in rows)
    say(f"{len(rows)} redaction(s) listed: {len(patterns)} pattern hit(s) not allowed (declare one with "
        "`muninn secret add NAME`, or allow a fingerprint that is not a secret with `muninn redact allow "
        f"FINGERPRINT`), {values} known value(s) (declared; the note still holds them)")


@app.command("list")
def list_cmd(ctx: typer.Context, json_out: bool = JsonOpt) -> None:
    """The allowed fingerprints: rule, when, and the note."""
    allowlist = _allowlist(ctx)
    rows = sorted(allowlist.entries.values(), key=lambda e: e["added"])
    if json_out:
        emit_json({"file": str(allowlist.path), "allowed": rows})
        return
    table = Table("fingerprint", "rule", "added", "note")
    for e in rows:
        table.add_row(e["fingerprint"], e["rule"], e["added"], e.get("note", ""))
    console.print(table)
