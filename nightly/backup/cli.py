"""`muninn backup create|restore`: the nightly backup by hand, and putting an area or everything back."""

from __future__ import annotations

from pathlib import Path

import typer

from muninn.core.cliutil import JsonOpt, emit_json, renamed, say, settings
from muninn.core.errors import ConfigError
from muninn.nightly.backup import make as backup
from muninn.nightly.backup import restore as backup_restore
from muninn.nightly.backup.key_cli import PassFileOpt, passphrase
from muninn.nightly.backup.offsite_cli import app as offsite_app

UnsealedOpt = typer.Option(False, "--allow-unsealed", help="Open a plain (unsealed) archive, as made before "
                           "backups were sealed. Anyone able to write the file chose its contents: only for a file "
                           "you made and kept yourself. Paths are still confined and files still gated.")


def _warn_unsealed(allow: bool) -> None:
    if allow:
        say("WARNING: --allow-unsealed: a plain archive is not authenticated; its contents are trusted only as "
            "far as the restore's confinement and leak gate check them")


app = typer.Typer(help="Dated backups of what cannot be rebuilt, and restoring from one.", no_args_is_help=True)


@app.command("create")
def create(ctx: typer.Context, json_out: bool = JsonOpt) -> None:
    """Write a backup now into <home>/backups/: every server file no export wrote or a reader changed
    (read with each reader's key), the vault store, policy.yaml, the sync manifests, the other local
    state nothing rebuilds, and the server's account list. Keys are never in it."""
    report = backup.create(settings(ctx))
    if json_out:
        emit_json(report.to_json())
        return
    say(f"{report.path} ({report.size} bytes): "
        f"{', '.join(f'{a} ({n})' for a, n in report.areas.items()) or 'no server files'}; "
        f"{report.rebuildable} file(s) left to the exports; {', '.join(report.included[1:])}")
    for s in report.skipped:
        say(f"skipped: {s}")


@app.command("restore")
def restore(
    ctx: typer.Context,
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="A backup from <home>/backups/."),
    to: str = typer.Option(None, "--to", help="One area to put back, e.g. viking://resources/agents/raven."),
    everything: bool = typer.Option(False, "--all", help="Everything: every server file and the local parts "
                                    "(policy, vault store, manifests, ...): a new machine's restore."),
    replace: bool = typer.Option(False, "--replace", help="Overwrite files that are there with other bytes "
                                 "(otherwise they are named, kept, and the restore exits 19)."),
    allow_unsealed: bool = UnsealedOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Put files back (each with the key of a reader that may write there), read them back, and bring
    every reader's keyword index and search vectors up to date, so restored facts are findable at once.

    Only a sealed backup opens. Every file goes back only where it was taken from, and every server file
    passes the leak gate as a sync does: known and retired values are redacted, and a file the gate
    still refuses is held, sealed, in <home>/backups/held/.

    \b
    Exit codes:
      22  the backup is not sealed, or a path in it leads elsewhere (nothing written)
      23  the gate held files back (named; the rest is restored)
      19  a file that differs was kept (named; `--replace` overwrites)"""
    if (to is None) == (not everything):
        raise ConfigError("choose one of --to AREA or --all", key="restore",
                          fix="e.g. `muninn backup restore FILE --to viking://resources/agents/raven`")
    _warn_unsealed(allow_unsealed)
    report = backup_restore.restore(settings(ctx), file, area=to, everything=everything, replace=replace,
                                    allow_unsealed=allow_unsealed)
    _say(report, json_out)
    backup_restore.raise_for(report)


def _say(report: backup_restore.RestoreReport, json_out: bool) -> None:
    if json_out:
        emit_json(report.to_json())
        return
    say(f"restored {len(report.written)} file(s) as {', '.join(sorted(report.writers)) or 'nobody'} "
        f"({report.redacted} redacted), {report.unchanged} already there, {len(report.local)} local file(s)"
        + (f", {len(report.held)} held in {report.held_in}" if report.held else ""))
    for w in report.warnings:
        say(f"warning: {w}")


@app.command("verify")
def verify(
    ctx: typer.Context,
    file: Path = typer.Argument(None, exists=True, dir_okay=False, help="A backup (default: the latest)."),
    allow_unsealed: bool = UnsealedOpt,
    json_out: bool = JsonOpt,
) -> None:
    """The restore drill: open the backup with the key in the keyring, restore every file into a scratch
    folder and check each against the hash the backup itself holds. Exit 1 when it does not open or any
    file differs (also the nightly job `backup-verify`); exit 22 when it is not sealed."""
    from muninn.nightly.backup import verify as backup_verify

    _warn_unsealed(allow_unsealed)
    report = backup_verify.drill(settings(ctx), file, allow_unsealed)
    if json_out:
        emit_json(report.to_json())
    else:
        say(f"{report.path}: {report.members} file(s) checked in {report.seconds:.1f} s, "
            f"{len(report.problems)} problem(s)")
    backup_verify.raise_for(report)


app.add_typer(offsite_app, name="offsite")

# The old home of the backup key's verbs: `muninn key export --backup --to FILE` / `key import --from FILE`
# now. Hidden, kept for scripts, each with a warning.
key_app = typer.Typer(help="Renamed: `muninn key export --backup --to FILE` and `muninn key import --from FILE`.",
                      no_args_is_help=True)
app.add_typer(key_app, name="key", hidden=True)


@key_app.command("export")
def key_export(ctx: typer.Context, dest: Path = typer.Argument(..., help="A new file (written 0600)."),
               passphrase_file: Path = PassFileOpt) -> None:
    """The old spelling of `muninn key export --backup --to FILE`."""
    from muninn.nightly.backup import key_transfer

    renamed("backup key export FILE", "key export --backup --to FILE")
    key_transfer.export_backup(settings(ctx), dest, passphrase(confirm=True, file=passphrase_file))
    say(f"wrote the backup key to {dest} (0600, sealed with your passphrase)")


@key_app.command("import")
def key_import(ctx: typer.Context, src: Path = typer.Argument(..., exists=True, dir_okay=False),
               passphrase_file: Path = PassFileOpt) -> None:
    """The old spelling of `muninn key import --from FILE`."""
    from muninn.nightly.backup import key_transfer

    renamed("backup key import FILE", "key import --from FILE")
    key_transfer.import_backup(settings(ctx), src, passphrase(confirm=False, file=passphrase_file))
    say("imported the backup key")
