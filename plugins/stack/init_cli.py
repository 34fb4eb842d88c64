"""`muninn init`: a first config for your own notes."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import typer
from typer import Abort

from muninn.core import outside_hints, paths
from muninn.core.cliutil import config_path, say
from muninn.core.errors import ConfigError
from muninn.plugins.stack import init_files

app = typer.Typer()


@app.command("init")
def init_cmd(
    ctx: typer.Context,
    notes: Path = typer.Option(None, "--notes", help="The folder that holds your markdown notes (asked if not given)."),
    config: Path = typer.Option(None, "--config", "-c", help="Write muninn.yaml here, policy.yaml and secrets.yaml "
                                "beside it (same as `muninn --config FILE init`)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Ask nothing: the notes folder is --notes, else ~/notes."),
) -> None:
    """Write a commented muninn.yaml, a policy.yaml for you, your assistant sessions and a local agent, and a
    secrets template (0600), next to each other; then `muninn doctor` says what is left.

    The files go where muninn looks for its config: `--config FILE` (before or after `init`, or
    $MUNINN_CONFIG), else ~/.config/muninn/muninn.yaml. An existing file is never overwritten: init names
    it and writes nothing (exit 8). A host with no usable keyring (headless, no Secret Service) is named at
    once, with the file backend to choose.

    \b
    Examples:
      muninn init
      muninn init --notes ~/notes --yes
      muninn init --config ./muninn.yaml --notes ./notes --yes
    """
    target = config or config_path(ctx) or paths.default_config_file()
    if notes is None:
        notes = Path("~/notes") if yes else _ask_notes()
    backend = os.environ.get("PYTHON_KEYRING_BACKEND", "").strip() or None
    planned = init_files.plan(target.expanduser().absolute(), init_files.check_notes(notes), backend)
    for path in init_files.write(planned):
        mode = path.stat().st_mode & 0o777
        typer.echo(f"wrote {path} ({mode:o})")
    _say_keyring(backend, target)
    if hints := outside_hints.suggestions():
        # Suggested, never written: which other tools' memories to search is the owner's choice.
        typer.echo("other tools' memories this environment names; to search them too, add under `outside:` "
                   f"in {target}:\n" + "\n".join(f"  {h}" for h in hints))
    typer.echo(f"next: {_doctor_command(target)}")


def _say_keyring(backend: str | None, target: Path) -> None:
    """Keys (the server's, each reader's, the vault's) live in a keyring: a host without one is told now,
    not at `doctor` after `up` failed."""
    from importlib.util import find_spec

    from muninn.core import credentials
    from muninn.core.errors import CredentialError

    try:
        credentials.probe(backend)
    except CredentialError as exc:
        install = "" if find_spec("keyrings.alt") else "install the file backend (`pip install keyrings.alt` " \
            "in muninn's environment), then "
        say(f"warning: {exc.message}, so `muninn up` cannot store its keys (fix: {install}set `keyring: {{backend: "
            f"keyrings.alt.file.PlaintextKeyring}}` in {target}, a file with values only base64-encoded, or run "
            "in a desktop session with a Secret Service)")


def _ask_notes() -> Path:
    try:
        answer = typer.prompt("Where do your notes live?", default="~/notes")
    except Abort:   # end of input: a script that should have passed --notes
        raise ConfigError("no notes folder was given", key="--notes", fix="pass --notes PATH (and --yes)") from None
    return Path(answer.strip())


def _doctor_command(target: Path) -> str:
    """`muninn doctor` when muninn finds this config by itself, else with the --config it needs."""
    if target.expanduser().absolute() == paths.default_config_file().expanduser().absolute():
        return "muninn doctor"
    return f"muninn --config {shlex.quote(str(target.expanduser().absolute()))} doctor"
