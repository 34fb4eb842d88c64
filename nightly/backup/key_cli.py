"""`muninn key export|import`: a reader's key (or the vault's, or the backup's) carried to another host
in a passphrase-sealed 0600 file, proven on import before it is stored. Never printed.

One home for every key: `backup key export DEST` / `backup key import SRC` are the old spellings of
`key export --backup --to FILE` / `key import --from FILE` (nightly/backup/cli.py keeps them, with a warning)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from muninn.core.cliutil import JsonOpt, emit_json, renamed, say, settings
from muninn.core.errors import ConfigError

PASSPHRASE_ENV = "MUNINN_PASSPHRASE"

app = typer.Typer(
    help="Carry a reader's key (or the vault's, or the backup's) to another host, sealed with a passphrase.\n\n"
    "\b\nExamples:\n"
    "  muninn key export --profile raven --to raven.key     (on the owner's host, after `policy apply`)\n"
    "  muninn key import --from raven.key                   (on the reader's host: proven, then stored)\n"
    "  muninn key export --vault --to vault.key             (the vault's key, for a new machine)\n"
    "  muninn key export --backup --to backup.key           (without it no backup opens on a new machine)\n"
    f"  {PASSPHRASE_ENV}=... or --passphrase-file FILE       (scripts; a terminal is asked twice)",
    no_args_is_help=True)

PassFileOpt = typer.Option(None, "--passphrase-file", exists=True, dir_okay=False,
                           help=f"Read the passphrase from this file's first line (else ${PASSPHRASE_ENV}, else "
                                "asked on the terminal).")


def passphrase(confirm: bool, file: Path | None = None) -> str:
    """From a file, $MUNINN_PASSPHRASE, or typed without echo (twice for a new file); never an argument,
    which shell history would keep. `confirm`: a key file is about to be written with it, so a passphrase
    file others can read is refused (reading an old key file still takes one)."""
    if file is not None:
        if confirm:
            _private(file)
        try:
            lines = file.read_text().splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"the passphrase file cannot be read ({exc})", path=str(file),
                              fix="give a readable text file whose first line is the passphrase") from None
        given = lines[0] if lines else ""
    elif PASSPHRASE_ENV in os.environ:
        given = os.environ[PASSPHRASE_ENV]
    elif sys.stdin.isatty():
        given = typer.prompt("passphrase", hide_input=True, confirmation_prompt=confirm)
    else:
        raise ConfigError("no passphrase: stdin is not a terminal", key="passphrase",
                          fix=f"pass --passphrase-file FILE or set {PASSPHRASE_ENV}")
    if not given:
        raise ConfigError("the passphrase is empty", key="passphrase",
                          fix="choose one of 8 characters or more: it is all that guards the key file")
    return given


def _private(file: Path) -> None:
    mode = file.stat().st_mode & 0o777
    if mode & 0o077:
        raise ConfigError(f"the passphrase file is readable or writable by others (mode {mode:04o})",
                          path=str(file), fix=f"run `chmod 600 {file}`, then again")


@app.command("export")
def export(
    ctx: typer.Context,
    profile: str = typer.Option(None, "--profile", help="The reader whose key to export (policy.yaml)."),
    vault: bool = typer.Option(False, "--vault", help="Export the vault's key instead (a new machine needs it "
                               "to open the restored vault store)."),
    backup: bool = typer.Option(False, "--backup", help="Export the backup key instead: keep it off this host; "
                                "without it no backup opens on a new machine."),
    to: Path = typer.Option(None, "--to", help="A new file, written 0600 (default: ./<profile>.muninn-key, "
                            "./vault.muninn-key or ./backup.muninn-key)."),
    passphrase_file: Path = PassFileOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Write a key, sealed with a passphrase, to a new 0600 file. The key is never printed, and the file
    holds neither it in clear nor the reader's areas.

    \b
    Example:
      muninn key export --profile raven --to /media/usb/raven.key
    """
    from muninn.nightly.backup import key_transfer

    if (profile is not None) + vault + backup != 1:
        raise ConfigError("choose one of --profile NAME, --vault or --backup", key="key export",
                          fix="e.g. `muninn key export --profile raven --to raven.key`")
    dest = to or Path(f"{profile or ('vault' if vault else 'backup')}.muninn-key")
    phrase = passphrase(confirm=True, file=passphrase_file)
    s = settings(ctx)
    moved = (key_transfer.export_reader(s, profile, dest, phrase) if profile
             else key_transfer.export_vault(s, dest, phrase) if vault
             else key_transfer.export_backup(s, dest, phrase))
    if json_out:
        emit_json(moved.to_json())
        return
    what = "the vault key" if vault else "the backup key" if backup else f"the key of {profile!r}"
    say(f"wrote {what} to {dest} (0600, sealed with your passphrase): carry it to the other host, then "
        f"`muninn key import --from {dest.name}` there")


@app.command("import")
def import_(
    ctx: typer.Context,
    src: Path = typer.Option(None, "--from", exists=True, dir_okay=False,
                             help="A file `muninn key export` wrote (a reader's, the vault's or the backup's key)."),
    old_src: Path = typer.Argument(None, exists=True, dir_okay=False, hidden=True),
    profile: str = typer.Option(None, "--profile", help="Store it for this reader (default: the one it was "
                                "exported for; its account and user must match)."),
    passphrase_file: Path = PassFileOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Open a key file, prove the key, and store it in this host's keyring. A reader's key is proven by a
    real call to the server as that reader; the vault's by opening every value in the vault store; the
    backup's by opening its sealed file. Refused, with nothing stored, on a wrong passphrase or a changed
    file (exit 4; 2 if it no longer parses), a reader not in policy.yaml (exit 2), or a key the server rejects (exit 5).

    \b
    Example:
      muninn key import --from raven.key --passphrase-file ~/.config/muninn/pass
    """
    from muninn.nightly.backup import crypt as backup_crypt
    from muninn.nightly.backup import key_transfer

    if old_src is not None:
        renamed("key import FILE", "key import --from FILE")
        src = src or old_src
    if src is None:
        raise ConfigError("which key file?", key="--from", fix="e.g. `muninn key import --from raven.key`")

    moved = key_transfer.import_any(settings(ctx), src, passphrase(confirm=False, file=passphrase_file), profile)
    if json_out:
        emit_json(moved.to_json())
        return
    who = (f"the key of {moved.profile!r}" if moved.profile
           else "the backup key" if moved.kind == backup_crypt.KEY_FILE_KIND else "the vault key")
    say(f"stored {who} in the keyring as {moved.key_name}" + (f" (proven: {moved.proven_by})"
                                                                if moved.proven_by else ""))
    if moved.replaced:
        say("it replaced a different key that was stored under that name")
