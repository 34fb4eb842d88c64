"""`muninn source add PATH`: a folder into muninn.yaml and its area into policy.yaml, in one step."""

from __future__ import annotations

from pathlib import Path

import typer

from muninn.core import cliutil, config
from muninn.core import policy as policy_mod
from muninn.core.errors import ConfigError, ExitCode

app = typer.Typer(help="The folders and files `export all` reads, each with an area the readers reach.\n\n"
                  "\b\nExamples:\n"
                  "  muninn source add ~/work-notes              (area work-notes, levels as your notes)\n"
                  "  muninn source add ~/wiki --area wiki --like notes --no-apply",
                  no_args_is_help=True)


@app.command("add")
def add_cmd(
    ctx: typer.Context,
    path: Path = typer.Argument(..., help="The folder (or file, for kinds that read one) to export."),
    kind: str = typer.Option("notes", "--kind", help="The source kind (notes, tasks, repo, ...)."),
    area: str = typer.Option(None, "--area", help="The area's name in policy.yaml (default: from the folder's "
                             "name); its URI is viking://resources/NAME unless the policy has it already."),
    like: str = typer.Option(None, "--like", help="Give each reader the level it has on this area (default: "
                             "the first notes source's area; without one, by kind: owner manage, assistant "
                             "write, agent read)."),
    apply: bool = typer.Option(None, "--apply/--no-apply", help="Run `muninn policy apply` afterwards (default: "
                               "when the server answers; else the command to run is printed)."),
) -> None:
    """Add a `sources:` entry for PATH to muninn.yaml and its area to policy.yaml, with each reader's level
    on it (as on the first notes source's area unless --like), keeping both files' comments; then apply the
    policy so every reader's ACL and keyword index follow. For a source muninn.yaml already has, only the
    area is added: that is `muninn doctor`'s fix for an exported area no reader can reach. Safe to run
    again. Exit 2 when the folder is missing or a file cannot be edited (named; nothing written)."""
    from muninn.plugins.stack import source_add

    s = cliutil.settings(ctx)
    config_file = cliutil.config_path(ctx) or s.source_file
    if config_file is None:
        raise ConfigError("there is no muninn.yaml to add a source to", fix="run `muninn init --notes PATH` first")
    folder = path.expanduser().absolute()
    if not folder.exists() or (kind == "notes" and not folder.is_dir()):
        raise ConfigError(f"{folder} {'is not a folder' if folder.exists() else 'does not exist'}", key="PATH",
                          fix="give the folder that holds the notes")
    planned = source_add.plan(s, Path(config_file), folder.resolve(), kind, area, like)
    source_add.write(planned)
    for line in planned.said:
        typer.echo(line)
    if planned.policy_text is None:
        cliutil.say(f"next: muninn export all && muninn sync all (the area is {planned.uri})")
        return
    fresh = config.load(planned.config_file, environ=None)
    if apply is None:
        from muninn.plugins.stack import lifecycle

        apply = lifecycle.healthy(fresh.server.base_url)
    if not apply:
        cliutil.say("next: muninn policy apply (or `muninn up`, which applies it), then "
                    "muninn export all && muninn sync all")
        return
    from muninn.plugins.stack import policy_apply

    report = policy_apply.apply(fresh, policy_mod.load_for(fresh), say=cliutil.say)
    if not report.ok:
        raise typer.Exit(ExitCode.CHECK_FAILED)
    cliutil.say("next: muninn export all && muninn sync all")
