"""`muninn secret load | list | find | show | get | exec | command | add | retire` (`vault sync`: old `load`).

Exit codes: 0 done; 1 `secret find` matched nothing; 2 bad input (an unknown id, a secrets file with its
file and line); 8 refused (`secret get` without a terminal; `secret retire` of a value written in a file;
`get`, `exec`, `show` of a retired id).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer
from rich.table import Table

from muninn.core.cliutil import JsonOpt, console, emit_json, renamed, say, settings
from muninn.core.errors import ConfigError, ExitCode, Refused
from muninn.guards.known.secret_values import is_declared_secret

from . import catalog, move
from .vault import Vault, exec_command_line

# `vault sync` is `secret load` now: one home for every secret verb. The group stays, hidden, so old
# scripts run (with a warning).
vault_app = typer.Typer(help="Renamed: `muninn vault sync` is `muninn secret load`.", no_args_is_help=True)
secret_app = typer.Typer(
    help="Find a credential by what it is for, and use it without seeing it.\n\n"
    "find → show (read `use`) → exec: the value is injected into the command's environment and its "
    "output is masked. `list` shows every one (metadata only), `add` stores one, `load` seals the values "
    "of your secrets YAML files, `retire` takes one out of use for good (its value stays redacted). Every "
    "call is written to the access log.\n\n"
    "\b\nExamples:\n"
    "  muninn secret load                  (every file in vault.files)\n"
    "  muninn secret load ~/secrets.yaml --dry-run\n"
    "  muninn secret list                  (what is in the vault: metadata only)\n"
    "  muninn secret find jira             (then: muninn secret show ID)",
    no_args_is_help=True)


def _vault(ctx: typer.Context) -> Vault:
    return Vault.open(settings(ctx))


@secret_app.command("load")
def load(
    ctx: typer.Context,
    files: list[Path] = typer.Argument(None, help="Secrets YAML files (default: `vault.files` in muninn.yaml)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Report what would change; write nothing."),
    json_out: bool = JsonOpt,
) -> None:
    """Seal every value from your secrets YAML files into the vault; report added, changed, removed ids.

    All files are validated first (a bad entry is reported with file, line and problem, a
    duplicate id is refused) and the store changes in one transaction: all of it or nothing.
    """
    report = _vault(ctx).sync(files or None, dry_run=dry_run)
    if json_out:
        emit_json(report.as_dict() | {"dry_run": dry_run})
        return
    verb = "would be " if dry_run else ""
    for name in ("added", "changed", "removed"):
        ids = getattr(report, name)
        console.print(f"{verb}{name}: {len(ids)}" + (f"  ({', '.join(ids)})" if ids else ""), highlight=False,
                      markup=False)
    if report.removed or report.changed:
        say("a removed or replaced value is kept as retired: still redacted, never usable (`muninn secret list "
            "--all`)")
    console.print(f"unchanged: {report.unchanged}", highlight=False)


@vault_app.command("sync", hidden=True)
def vault_sync(
    ctx: typer.Context,
    files: list[Path] = typer.Argument(None),
    dry_run: bool = typer.Option(False, "--dry-run"),
    json_out: bool = JsonOpt,
) -> None:
    """The old spelling of `muninn secret load`."""
    renamed("vault sync", "secret load")
    load(ctx, files, dry_run, json_out)


def _meta_lines(meta: dict) -> list[str]:
    """Plain text lines (printed with markup off: notes may hold brackets)."""
    what = " · ".join(str(meta[k]) for k in ("service", "environment", "kind") if meta.get(k))
    lines = [f"{meta['id']}  ({what})"]
    for key in ("username", "url"):
        if meta.get(key):
            lines.append(f"  {key}: {meta[key]}")
    if meta.get("tags"):
        lines.append(f"  tags: {', '.join(meta['tags'])}")
    if meta.get("parts"):
        lines.append(f"  parts: {', '.join(meta['parts'])}")
    if meta.get("notes"):
        lines.append(f"  notes: {' '.join(str(meta['notes']).split())}")
    if meta.get("use"):
        lines.append(f"  use: {meta['use']}")
    return lines


@secret_app.command("list")
def list_cmd(ctx: typer.Context, json_out: bool = JsonOpt,
             all_: bool = typer.Option(False, "--all", "-a", help="Retired values too (still redacted, never "
                                       "usable), each with when and why: retired, replaced or removed.")) -> None:
    """Every secret in the vault: id, kind, service, which inventory entries use it, when it was created
    and last rotated. Metadata only, never a value (`secret show ID` for one in full). `--all` adds the
    retired ones; `--json` rows have `status`: live or retired."""
    vault = _vault(ctx)
    rows = vault.list_all(retired=all_)
    if json_out:
        emit_json(rows)
        return
    hidden = 0 if all_ else vault.retired_count()
    if not rows:
        say("the vault holds no secret: `muninn secret add ID`, or `muninn vault sync` for the files in vault.files"
            + (f" ({hidden} retired value(s): `--all`)" if hidden else ""))
        return
    table = Table("id", "kind", "service", "used by", "created", "rotated", *(("status",) if all_ else ()))
    for r in rows:
        used = "?" if r["used_by"] is None else ", ".join(r["used_by"]) or "-"
        rotated = _day(r["rotated_at"]) if r["rotated_at"] else ("never" if r["created_at"] else "-")
        status = ("live",) if r["status"] == "live" else (f"{r['why']} {_day(r['retired_at'])}",)
        table.add_row(r["id"], r["kind"] or "-", r["service"] or "-", used, _day(r["created_at"]),
                      rotated if r["status"] == "live" else "-", *(status if all_ else ()))
    console.print(table)
    live = sum(r["status"] == "live" for r in rows)
    say(f"{live} secret(s)" + (f", {len(rows) - live} retired value(s) (still redacted, never usable)" if all_
                                else f"; {hidden} retired value(s) not shown (`--all`)" if hidden else "")
        + ("; `-`: not known (stored before muninn kept dates)" if any(
            r["status"] == "live" and not r["created_at"] for r in rows) else "")
        + ("; used by `?`: the inventory could not be read (`muninn doctor`)" if any(
            r["used_by"] is None for r in rows) else ""))


def _day(stamp: str | None) -> str:
    return stamp[:10] if stamp else "-"


@secret_app.command("find")
def find(ctx: typer.Context,
         query: list[str] = typer.Argument(..., help="What the secret is for, in words; or a glob over ids and "
                                           "services (`'*'`, `'grafana-*'`: quote it from the shell)."),
         limit: int = typer.Option(None, "--limit", "-n", help="At most this many (words: 10 unless given; a "
                                   "glob: every match)."),
         json_out: bool = JsonOpt) -> None:
    """Search ids, services, tags, notes and `use` lines, best first; a glob (`*`, `?`, `[`) matches ids and
    services instead, in id order. Prints metadata, never a value."""
    words = " ".join(query)
    hits = _vault(ctx).find(words, limit=limit if limit is not None or catalog.is_glob(words) else 10)
    if json_out:
        emit_json(hits)
        return
    if not hits:
        say("no secret matches; try other words, or `muninn vault sync` if you added one")
        raise typer.Exit(ExitCode.CHECK_FAILED)
    for meta in hits:
        console.print("\n".join(_meta_lines(meta)), highlight=False, markup=False)


@secret_app.command("show")
def show(ctx: typer.Context, secret_id: str = typer.Argument(..., metavar="ID"), json_out: bool = JsonOpt) -> None:
    """Metadata, the `use` line, the variable `exec` sets, and when it was last verified."""
    meta = _vault(ctx).show(secret_id)
    if json_out:
        emit_json(meta)
        return
    lines = _meta_lines(meta)
    lines.append(f"  env: {', '.join(meta['env_names'].values())}")
    lines.append(f"  run: {meta['exec']}")
    lines.append(f"  {meta['last_verified']}")
    console.print("\n".join(lines), highlight=False, markup=False)


def _stdout_is_terminal() -> bool:
    try:
        return os.isatty(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):   # closed (`>&-`) or no file behind it: not a terminal
        return False


@secret_app.command("get")
def get(ctx: typer.Context, secret_id: str = typer.Argument(..., metavar="ID"),
        part: str = typer.Option(None, "--part", help="Which part of a multi-part secret.")) -> None:
    """Print the value, only when stdout is a real terminal (never into a pipe, file or agent)."""
    value = _vault(ctx).get(secret_id, tty=_stdout_is_terminal(), part=part)
    sys.stdout.write(value + "\n")


@secret_app.command("exec")
def exec_(
    ctx: typer.Context,
    secret_id: str = typer.Argument(..., metavar="ID"),
    command: list[str] = typer.Argument(..., metavar="-- CMD...", help="The command, after `--`."),
    env: str = typer.Option(None, "--env", help="Variable name to set (default: from the entry, or derived "
                            "from the id: jira-api-token → JIRA_API_TOKEN). Multi-part: part=NAME,part=NAME."),
    stdin: bool = typer.Option(False, "--stdin", help="Write the value to the command's stdin instead "
                               "(e.g. `sudo -S`)."),
    part: str = typer.Option(None, "--part", help="With --stdin: which part of a multi-part secret."),
) -> None:
    """Run CMD with the secret injected; every byte of its stdout and stderr is masked.

    The exit code is CMD's own. Use variables in single quotes so they expand in the child:

        muninn secret exec jira-api-token -- bash -c 'curl -H "Authorization: Bearer $JIRA_API_TOKEN" URL'
    """
    result = _vault(ctx).exec(secret_id, command, env_name=env, stdin=stdin, part=part)
    raise typer.Exit(result.exit_code)


@secret_app.command("command")
def command_line(secret_id: str = typer.Argument(..., metavar="ID"),
                 command: str = typer.Argument(..., help="The command, as one string using $VARIABLE."),
                 env: str = typer.Option(None, "--env"), stdin: bool = typer.Option(False, "--stdin")) -> None:
    """Print the `muninn secret exec` line that runs COMMAND with the secret (what an agent runs)."""
    sys.stdout.write(exec_command_line(secret_id, command, env_name=env, stdin=stdin) + "\n")


@secret_app.command("add")
def add(
    ctx: typer.Context,
    secret_id: str = typer.Argument(..., metavar="ID"),
    stdin: bool = typer.Option(False, "--stdin", help="Read the value from stdin (scripts: `pass show x | muninn "
                               "secret add ID --stdin`); one trailing newline is dropped."),
    replace: bool = typer.Option(False, "--replace", help="Change the value of a secret that already has one."),
    service: str = typer.Option(None, "--service", help="Metadata of a new entry: the service it opens."),
    environment: str = typer.Option(None, "--environment"),
    kind: str = typer.Option(None, "--kind", help="token, password, passphrase..."),
    username: str = typer.Option(None, "--username"),
    url: str = typer.Option(None, "--url"),
    use: str = typer.Option(None, "--use", help="How to use it, with $VARIABLE (shown by `secret show`)."),
    notes: str = typer.Option(None, "--notes"),
    tags: list[str] = typer.Option(None, "--tag", help="A tag (repeat for more)."),
) -> None:
    """Ask for a secret's value without echo (twice), seal it in the vault, and add a metadata-only entry for
    it to the first file of `vault.files` if none has one. The value is never written to a file and never
    taken from the command line. From then on it is redacted from exports, MCP output and logs, and the
    leak gate looks for it (a value under 6 characters, or one ordinary word, is stored but not redacted:
    it would censor ordinary text; you are told so).

    \b
    Examples:
      muninn secret add grafana-admin --service grafana --kind password --username admin
      pass show grafana | muninn secret add grafana-admin --stdin --replace
    """
    value = _read_value(secret_id, stdin)
    meta = {k: v for k, v in {"service": service, "environment": environment, "kind": kind, "username": username,
                              "url": url, "use": use, "notes": notes, "tags": tags}.items() if v}
    found = _vault(ctx).add(secret_id, value, meta, replace=replace)
    console.print(f"{'replaced' if replace else 'added'} {secret_id}: value in the vault, metadata in "
                  f"{found.path}:{found.line}", highlight=False, markup=False)
    if not is_declared_secret(value):
        say(f"[yellow]warning:[/] the value of {secret_id} is shorter than 6 characters or one ordinary word: "
            "`secret exec` injects it, but export, the leak gate and MCP output do not redact it (it would "
            "censor ordinary text)")


def _read_value(secret_id: str, stdin: bool) -> str:
    if not stdin and not sys.stdin.isatty():
        # getpass would fall back to reading a pipe with the echo on; a script says --stdin instead.
        raise ConfigError("stdin is not a terminal, so there is nowhere to ask for the value", key="value",
                          fix="pipe it in with --stdin, or run this at a terminal")
    if stdin:
        value = sys.stdin.read()
        value = value[:-2] if value.endswith("\r\n") else value[:-1] if value.endswith("\n") else value
    else:
        try:
            value = typer.prompt(f"Value for {secret_id}", hide_input=True,
                                 confirmation_prompt="Again, to confirm")
        except typer.Abort:
            raise ConfigError("no value was given", key="value",
                              fix="type it at the prompt, or pipe it in with --stdin") from None
    if not value.strip():
        raise ConfigError("the value is empty", key="value", fix="give the secret's value")
    return value


@secret_app.command("retire")
def retire(ctx: typer.Context, secret_id: str = typer.Argument(..., metavar="ID"), json_out: bool = JsonOpt) -> None:
    """Take a secret you no longer use out of use for good; its value stays redacted, as a retired value.

    The value stays in the vault, marked retired: export, the leak gates, a restore, MCP output and
    `exec` masking still redact it, and the server leak scan and `leak purge` find it by a salted hash.
    `secret get`, `exec`, `show`, `access exec` and `verify` refuse the id (exit 8); `secret list --all`
    lists it. Its entry in the secrets YAML is commented out, marked retired. `secret add ID` later gives
    the id a new value; the retired one stays redacted.

    A secret whose value is written in a secrets file is refused (exit 8): delete its entry there and
    run `muninn vault sync`, which retires a value the same way.
    """
    entry = _vault(ctx).retire(secret_id)
    if json_out:
        emit_json({"retired": secret_id, "entry": str(entry) if entry else None})
        return
    say(f"retired {secret_id}: no longer usable; its value stays redacted from exports, MCP output and logs"
        + (f"; its entry in {entry} is commented out" if entry else ""))


@secret_app.command("move")
def move_cmd(
    ctx: typer.Context,
    what: str = typer.Argument(..., metavar="FINGERPRINT|ID", help="From `muninn redact review`: a pattern hit's "
                               "fingerprint, or a known value's secret id."),
    new_id: str = typer.Option(None, "--id", help="The id the value gets in the vault (a pattern hit)."),
    service: str = typer.Option(None, "--service", help="Metadata of the new entry: the service it opens."),
    kind: str = typer.Option(None, "--kind", help="token, password, passphrase..."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask (for scripts)."),
    json_out: bool = JsonOpt,
) -> None:
    """Move a secret found in a note into the vault: the note gets `{{secret:ID}}` in its place, after asking.

    The value is sealed in the vault first (a known value is there already); then each note that holds it
    is copied to <home>/moved-notes/<time>/ (0600) and written with the reference wherever the value
    stood. Exports show the reference as `<vault secret ID>`; `muninn secret show ID` says how to use it.
    Nothing is rewritten without your yes (a terminal asks; `--yes` for scripts). The value is never printed.

    \b
    Examples:
      muninn redact review                                 (the fingerprint, file and line of each hit)
      muninn secret move labelled-secret:9b2f6712... --id grafana-token --service grafana
    """
    s = settings(ctx)
    planned = move.plan(s, what, new_id)
    if not planned.places:
        raise ConfigError(f"the value of {planned.secret_id} is no longer in the note", key="FINGERPRINT",
                          fix="nothing to move; `muninn export all` updates the review")
    backups = move.backup_dir(s)
    for place in planned.places:
        say(f"{place.file}: line(s) {', '.join(map(str, place.lines))}: the "
            f"{planned.rule + ' hit' if planned.rule else f'value of {planned.secret_id}'} becomes "
            f"{planned.reference} ({place.count} place(s))", )
    say(("the value goes into the vault as " + planned.secret_id if planned.kind == "pattern"
         else f"the vault holds {planned.secret_id} already") + f"; each note is kept first in {backups} (0600)")
    if not yes:
        if not sys.stdin.isatty():
            raise Refused("no note was rewritten: stdin is not a terminal, so there is no one to ask",
                          fix="run it at a terminal, or pass --yes")
        if not typer.confirm("Rewrite the note(s)?", default=False, err=True):
            raise Refused("no note was rewritten", fix="answer y to move it, or pass --yes")
    if planned.kind == "pattern":
        meta = {k: v for k, v in {"service": service, "kind": kind,
                                  "notes": f"moved from {planned.places[0].file.name}"}.items() if v}
        _vault(ctx).add(planned.secret_id, planned.value, meta)
    kept = move.apply(s, planned, backups)
    if json_out:
        emit_json({"secret_id": planned.secret_id, "reference": planned.reference,
                   "notes": [str(p.file) for p in planned.places], "kept": [str(k) for k in kept]})
        return
    say(f"moved: {len(planned.places)} note(s) now hold {planned.reference}; the originals are in {backups}; "
        "the next `muninn export all` shows it as <vault secret " + planned.secret_id + ">")
