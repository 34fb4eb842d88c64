"""The `muninn` command. It only names each part's typer sub-app; nothing imports it.

The parts are imported lazily: `muninn --help` lists every command from muninn/cli_index.py (generated
from the parts themselves, kept true by tests/test_cli_lazy.py), and a command imports only its own
part, so a fresh process starts in a tenth of a second instead of loading every part's dependencies.

Errors are translated here and nowhere else: a MuninnError prints one sentence to stderr and
exits with its code (see docs/cli.md, "Exit codes").
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
import typer.core
from typer.core import TyperCommand, TyperGroup

# Click's own help, not typer's rich panels: paragraphs are rewrapped to the terminal (a docstring's
# line breaks never cut a sentence), `\b` blocks (examples) are kept as written, flags show no `<bool>`,
# and a pipe gets no box drawing. Errors never reach typer's panels either (muninn/core/edge.py).
typer.core.HAS_RICH = False
# typer 0.29 names a repeatable option's or argument's type in Python (`--only <list[str]>`): help shows
# the item's type instead (`--only <str>`, `ids... <path>`), as for any other value; its text says it repeats.
_PARAMETER = getattr(typer.core, "_TyperParameter", None)
_python_type = getattr(_PARAMETER, "display_type", None)


def _item_type(self: Any, ctx: Any) -> str:
    shown = _python_type(self, ctx)   # type: ignore[misc]
    if shown.startswith("<list[") and shown.endswith("]>"):
        return f"<{shown[6:-2].lower()}>"
    # `<float range>`: the bounds are printed after the help (`[x>=1]`), so the type is the value's own.
    return shown.replace(" range>", ">")



if _python_type is not None:
    _PARAMETER.display_type = _item_type   # type: ignore[union-attr]

if TYPE_CHECKING:
    from typer._click import Command

# (module, attribute, name) of every command group the registry knows (muninn.commands lists the
# built-ins), as the generated index last saw them: reading them needs no registry, so no pydantic.
from muninn.cli_index import PARTS  # noqa: E402


def part_commands(module: str, attr: str, name: str | None) -> dict[str, Command]:
    """The click commands one part puts at the top level, by name (imports the part)."""
    # Added to a throwaway parent exactly as an eager root would add it, so typer resolves names,
    # help and one-command groups the same way.
    parent = typer.Typer()
    parent.add_typer(getattr(importlib.import_module(module), attr), **({"name": name} if name else {}))
    commands = dict(typer.main.get_group(parent).commands)
    for cmd in commands.values():
        _whole_short_help(cmd)
    return commands


def _whole_short_help(cmd: Command) -> None:
    """A group's listing shows each subcommand's whole first sentence, wrapped, as the root's does:
    click would cut it at the terminal width minus the name (`… report...` in a pipe)."""
    for sub in getattr(cmd, "commands", {}).values():
        if not sub.short_help and sub.help:
            sub.short_help = " ".join(sub.help.strip().split("\n\n")[0].split())
        _whole_short_help(sub)


def all_commands() -> dict[str, Command]:
    """Every top-level command, importing every part (the index generator and its test use it)."""
    from muninn.core import registry

    out: dict[str, Command] = {}
    for part in registry.commands():
        out.update(part_commands(*part))
    return out


# `muninn --help`'s panels, in the order a user meets them.
PANELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Start", ("init", "source", "up", "doctor", "status", "down", "demo")),
    ("Daily", ("export", "sync", "search", "read", "ls", "audit", "forget", "watch")),
    ("Secrets and access", ("secret", "access", "verify", "redact", "leak")),
    ("Agents", ("mcp", "policy", "skills", "guard")),
    ("Maintenance", ("nightly", "backup", "key", "embed", "models", "server", "outside", "search-index")),
    ("Developer", ("eval", "bench")),
)
# Run for you (a hook, a search, a one-off migration): not in the top list, named in one line under it.
PLUMBING = ("observe", "serve", "move-to-root", "rename-remembered")
# Old spellings that still run, with a warning (docs/cli.md, "Renamed"): `vault sync` is `secret load`.
RENAMED = ("vault",)


def panels(listed: list[str]) -> list[tuple[str, list[str]]]:
    """PANELS over the commands there are; any not named (an outside plugin's) in a last panel."""
    named = {n for _, names in PANELS for n in names} | set(PLUMBING) | set(RENAMED)
    out = [(title, [n for n in names if n in listed]) for title, names in PANELS]
    return [*out, ("Other commands (plugins)", [n for n in listed if n not in named])]


class LazyGroup(TyperGroup):
    """Lists commands from the index and imports a part only when one of its commands runs."""

    _listing = False

    def list_commands(self, ctx: typer.Context) -> list[str]:
        from muninn.cli_index import COMMANDS

        return list(COMMANDS)

    def get_command(self, ctx: typer.Context, cmd_name: str) -> Command | None:
        from muninn.cli_index import COMMANDS

        entry = COMMANDS.get(cmd_name)
        if self._listing and entry is not None:
            # short_help: the listing shows the whole first paragraph, wrapped, not cut at 45 characters.
            return TyperCommand(cmd_name, help=entry[1], short_help=" ".join(entry[1].split()))
        if entry is not None:
            found = part_commands(*PARTS[entry[0]]).get(cmd_name)
            if found is not None:
                return found
        # Not in the index (a command added since it was generated): find it the slow way.
        return all_commands().get(cmd_name)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """Typer suggests from `self.commands`, which a lazy group leaves empty: suggest from the index."""
        from typer._click.exceptions import UsageError

        try:
            return super().resolve_command(ctx, args)
        except UsageError as exc:
            import difflib

            typed = args[0] if args else ""
            close = difflib.get_close_matches(typed, self.list_commands(ctx)) if not typed.startswith("-") else []
            if close and "Did you mean" not in exc.message:
                exc.message = f"{exc.message.rstrip('.')}. Did you mean {', '.join(repr(c) for c in close)}?"
            raise

    def format_commands(self, ctx: typer.Context, formatter: Any) -> None:
        """The commands in panels by when a user reaches for them (PANELS); an outside plugin's last."""
        listed = self.list_commands(ctx)
        for title, names in panels(listed):
            rows = [(name, cmd.get_short_help_str()) for name in names
                    if (cmd := self.get_command(ctx, name)) is not None and not cmd.hidden]
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
        plumbing = [n for n in PLUMBING if n in listed]
        if plumbing:
            formatter.write_paragraph()
            formatter.write_text(f"Run for you by hooks, searches and migrations: {', '.join(plumbing)} "
                                 "(`muninn COMMAND --help`).")

    def format_help(self, ctx: typer.Context, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


app = typer.Typer(
    name="muninn",
    cls=LazyGroup,
    help="Safe, findable shared memory on OpenViking for an engineer and their AI agents.\n\n"
    "Start with `muninn init` (a config for your own notes), then `muninn doctor` (what is missing and how to "
    "fix it).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def app_group() -> LazyGroup:
    """The root click group (tests and the index generator look commands up through it)."""
    group = typer.main.get_group(app)
    assert isinstance(group, LazyGroup)
    return group


def _version(value: bool) -> None:
    if value:
        from muninn import __version__

        sys.stdout.write(f"muninn {__version__}\n")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    config: Path = typer.Option(None, "--config", "-c", envvar="MUNINN_CONFIG",
                                help="muninn.yaml to use (default: <XDG config>/muninn/muninn.yaml)."),
    version: bool = typer.Option(False, "--version", "-V", is_eager=True, callback=_version,
                                 help="Print muninn's version and exit."),
) -> None:
    ctx.obj = {"config_path": config.expanduser().resolve() if config else None}


def main() -> None:
    # Born private: every file and folder muninn (and the server and sidecar it starts) creates is
    # 0600 / 0700, whichever part writes it (plugins/stack/home_modes.py checks and tightens the rest).
    os.umask(0o077)
    from muninn.core import edge, settings_moved

    settings_moved.say_on_stderr()
    # Every ending (usage error, MuninnError, a bug) is one sentence and a code: muninn/core/edge.py.
    # Tests that drive `app` with CliRunner see the raw exception instead, as they always did.
    edge.run(app, prog_name="muninn")


def _index_source() -> str:
    from muninn.core import registry

    parts = registry.commands()
    lines = ["# ruff: noqa: E501",
             '"""Generated by `python -m muninn.cli --write-index`: the command groups the registry knows',
             "(PARTS, in `muninn --help`'s order), then each top-level command, the part it comes from (an",
             "index into PARTS) and its help's first paragraph, so `muninn --help` imports no part.\"\"\"", "",
             "PARTS: tuple[tuple[str, str, str | None], ...] = (",
             *[f"    {part!r}," for part in parts], ")", "",
             "COMMANDS: dict[str, tuple[int, str]] = {"]
    where = {}
    for i, part in enumerate(parts):
        for name in part_commands(*part):
            where[name] = i  # a later part wins a clash, as typer.add_typer does
    for name, cmd in all_commands().items():
        # The listing shows only the first paragraph of a command's help.
        lines.append(f"    {name!r}: ({where[name]}, {(cmd.help or '').strip().split(chr(10) * 2)[0]!r}),")
    return "\n".join([*lines, "}", ""])


def write_index(path: Path | None = None) -> Path:
    target = path or Path(__file__).with_name("cli_index.py")
    target.write_text(_index_source())
    return target


if __name__ == "__main__" and sys.argv[1:] == ["--write-index"]:
    print(write_index())
