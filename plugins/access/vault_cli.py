"""`muninn vault sync` and `muninn secret find | show | get | exec`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from muninn.core.cliutil import JsonOpt, console, emit_json, say, settings
from muninn.core.errors import ConfigError, ExitCode
from muninn.guards.known.secret_values import is_declared_secret

from .vault import Vault, exec_command_line

vault_app = typer.Typer(help="The local encrypted vault, filled from your secrets YAML files.\n\n"
                        "\b\nExamples:\n"
                        "  muninn vault sync                   (every file in vault.files)\n"
                        "  muninn vault sync ~/secrets.yaml --dry-run\n"
                        "  muninn secret find jira             (then: muninn secret show ID)",
                        no_args_is_help=True)
secret_app = typer.Typer(
    help="Find a credential by what it is for, and use it without seeing it.\n\n"
    "find → show (read `use`) → exec: the value is injected into the command's environment and its "
    "output is masked. Every call is written to the access log.", no_args_is_help=True)


def _vault(ctx: typer.Context) -> Vault:
    return Vault.open(settings(ctx))


@vault_app.command("sync")
def sync(
    ctx: typer.Context,
    files: list[Path] = typer.Argument(None, help="Secrets YAML files (default: `vault.files` in muninn.yaml)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Report what would change; write nothing."),
    json_out: bool = JsonOpt,
) -> None:
    """Encrypt every value from the secrets files into the store; report added, changed, removed ids.

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
    console.print(f"unchanged: {report.unchanged}", highlight=False)


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


@secret_app.command("find")
def find(ctx: typer.Context, query: list[str] = typer.Argument(..., help="What the secret is for, in words."),
         limit: int = typer.Option(10, "--limit", "-n"), json_out: bool = JsonOpt) -> None:
    """Search ids, services, tags, notes and `use` lines. Prints metadata, never a value."""
    hits = _vault(ctx).find(" ".join(query), limit=limit)
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
