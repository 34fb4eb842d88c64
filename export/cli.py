"""`muninn export KIND PATH --out DIR` and `muninn sync DIR --to viking://resources/<area>`.

Exit codes: 0 clean; 2 bad input (file and line named); 3 the leak gate dropped a file (export:
the rest was written) or refused one (sync: not written by export, edited since, or a leak;
nothing was uploaded); 9 sync incomplete (a file missing after wait, or a path held by a file
muninn did not write); 4/5 keyring or server errors.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from muninn.core import billing
from muninn.core.cliutil import JsonOpt, console, emit_json, err_console, say, settings
from muninn.core.cliutil import Progress as SourceProgress  # one line per source; rich's bar is sync's
from muninn.core.errors import ConfigError
from muninn.export import pipeline, sources
from muninn.export import sync as sync_mod
from muninn.export.redaction_report import summary_lines
from muninn.export.sync_gate import SyncGate
from muninn.guards.known import secret_values

app = typer.Typer()

KINDS_HELP = "tasks, notes, observations, secrets, inventory, repo (plugins may add more), or `all`"


def _export_table(reports: dict[str, pipeline.ExportReport]) -> Table:
    table = Table("source", "facts", "written", "unchanged", "removed", "redacted", "dropped")
    for name, r in reports.items():
        table.add_row(name, str(r.facts), str(r.written), str(r.unchanged), str(r.removed), str(r.redacted),
                      f"[red]{len(r.dropped)}[/]" if r.dropped else "0")
    return table


def _record_review(ctx: typer.Context, reports: dict[str, pipeline.ExportReport]) -> None:
    """Every redaction of this export, placed in its source file and line, for `muninn redact review`."""
    from muninn.guards.undeclared import review

    review.record(settings(ctx), "export", [r for rep in reports.values() for r in rep.review])


def _finish_export(reports: dict[str, pipeline.ExportReport]) -> None:
    total = {k: sum(getattr(r, k) for r in reports.values()) for k in ("facts", "written", "unchanged", "removed")}
    dropped = [d for r in reports.values() for d in r.dropped]
    say(f"export: {len(reports)} source(s), {total['facts']} facts: {total['written']} written, "
        f"{total['unchanged']} unchanged, {total['removed']} removed, {len(dropped)} dropped")
    for line in summary_lines([r for rep in reports.values() for r in rep.redactions]):
        err_console.print(line, highlight=False, markup=False, soft_wrap=True)
    for d in dropped:
        say(f"[red]dropped[/] {d['path']}: {d['reason']}")
    undated = [(where, why) for r in reports.values() for where, why in r.undated.items()]
    if undated:
        where, why = undated[0]
        say(f"[yellow]undated[/] {len(undated)} fact(s) whose date column held no readable date, exported without "
            f"one (first: {escape(where)}, {escape(why)})")
    if dropped:
        raise pipeline.LeakGateDropped(f"the leak gate dropped {len(dropped)} file(s); the rest was written",
                                       fix="add the missed value to a secrets file, or fix the redaction rule")


@app.command()
def export(
    ctx: typer.Context,
    kind: str = typer.Argument(..., help=KINDS_HELP),
    path: Path = typer.Argument(None, help="The source: a SQLite file, a notes folder, a JSONL log, a YAML "
                                "file or a git repository. Not used with `all`."),
    out: Path = typer.Option(None, "--out", "-o", help="Folder for the fact files (required unless `all`)."),
    secrets: list[Path] = typer.Option([], "--secrets", "-s", help="Secrets YAML, .env or dump file whose values "
                                       "are redacted wherever they appear (besides those muninn.yaml names: "
                                       "vault.files, export.secret_files, secrets sources). Repeatable."),
    json_out: bool = JsonOpt,
) -> None:
    """Turn a source into fact files: one fact per markdown file, redacted, then leak-gated.

    Every fact is redacted by value (every secret-ish value in the --secrets files, and in a
    secrets source itself) and by pattern, then rendered with front matter and a lead line.
    An independent leak gate reads each rendered file; a file it flags is not written and is
    listed under `dropped` (exit 3). Paths are deterministic, so a rerun reports `unchanged`.

    Where redaction acted is listed (stderr; `redactions` in --json): file, line, the secret id or
    the rule, and a pattern hit's fingerprint. A hit that is not a secret (a false positive) is
    allowed with `muninn redact allow FINGERPRINT`; never by a comment in the note.

    Examples:

      muninn export notes ~/notes --out ~/exports/notes --secrets ~/secrets.yaml

      muninn export tasks roadmap.db --out ~/exports/roadmap --json

      muninn export all      (every entry of `sources:` in muninn.yaml)

    With `all`, a source whose path is absent (an unmounted disk) is skipped with a warning and the
    others still run; the command fails only when every source was absent. Bad input stops it.
    """
    if kind == "all":
        _refresh_known(settings(ctx))
        bar: list[SourceProgress] = []

        def progress(total: int, name: str) -> None:
            if not bar:
                bar.append(SourceProgress("export", total))
            bar[0].tick(name)

        try:
            reports = pipeline.run_all(settings(ctx), extra_secrets=secrets, progress=progress)
        finally:
            for b in bar:
                b.close()
        if json_out:
            emit_json({name: r.as_json() for name, r in reports.items()})
        else:
            console.print(_export_table({n: r for n, r in reports.items() if r.error is None}))
            for r in reports.values():
                _say_skipped(r.skipped)
        failed = pipeline.failed(reports)
        for name, exc in failed.items():
            say(f"[yellow]skipped[/] {escape(name)}: {escape(str(exc))}")
        if failed and len(failed) == len(reports):
            raise next(iter(failed.values()))  # every source failed: the first one's error and exit code
        _record_review(ctx, reports)
        _finish_export(reports)
        return
    if path is None or out is None:
        raise typer.BadParameter("give the source PATH and --out DIR (or use `muninn export all`)")
    sources.get(kind)
    # Values configured anywhere (vault.files, guard/export secret_files, secrets sources) are
    # always redacted too: forgetting --secrets must not be how a vault value reaches a fact.
    s = settings(ctx)
    _refresh_known(s)
    report = pipeline.run(kind, path, out, known=secret_values.known(s, secrets), allowlist=s.paths.redact_allowlist)
    if json_out:
        emit_json(report.as_json())
    else:
        console.print(_export_table({kind: report}))
        _say_skipped(report.skipped)
    _record_review(ctx, {kind: report})
    _finish_export({kind: report})


def _say_skipped(skipped: dict[str, str], shown: int = 10) -> None:
    """One line per file the source passed over, and why (the first `shown`, then a count)."""
    for where, why in list(skipped.items())[:shown]:
        say(f"skipped {escape(where)}: {escape(why)}")
    if len(skipped) > shown:
        say(f"skipped {len(skipped) - shown} more file(s)")


def _refresh_known(s) -> None:
    """Live sources of known values (the clusters' Secrets) into their caches; one that could not be
    read is said, and its cached values are used."""
    for warning in secret_values.refresh(s):
        say(f"[yellow]warning[/] {escape(warning)}")


@app.command(name="sync")
def sync_cmd(
    ctx: typer.Context,
    src: str = typer.Argument(..., help="Folder of fact files (from `muninn export`), or `all`."),
    to: str = typer.Option(None, "--to", help="The area: viking://resources/<area> (required unless `all`)."),
    prune: bool = typer.Option(False, "--prune", help="Remove files muninn wrote earlier whose fact is gone. "
                               "Files muninn did not write, and muninn's files a reader changed, are never "
                               "touched."),
    replace: bool = typer.Option(False, "--replace", help="Overwrite (or prune) a conflict: a file at one of "
                                 "muninn's paths whose server bytes muninn did not write."),
    json_out: bool = JsonOpt,
) -> None:
    """Write fact files into OpenViking: vectors only, in batches, touching only files muninn owns.

    A manifest in the workspace records what muninn wrote (path and content hash): unchanged
    files are skipped, changed ones replaced. A file whose bytes on the server are not what muninn
    wrote (a reader edited it, or someone else's file holds the path) is a conflict: kept, named,
    exit 19, until `--replace`. After writing it waits for indexing, then walks
    the area folder by folder and counts every manifest entry (`missing_after_wait`). A run
    that was killed converges on rerun without duplicates. Acts as openviking.account /
    openviking.user from muninn.yaml, with that user's key from the keyring.

    Examples:

      muninn sync ~/exports/notes --to viking://resources/notes

      muninn sync all --prune --json
    """
    from muninn.core.client import OpenViking

    s = settings(ctx)
    gate = SyncGate.from_settings(s)
    if src != "all":
        # Bad input is exit 2, and a gate refusal exit 3, before any key or server is touched.
        if not to:
            raise typer.BadParameter("give --to viking://resources/<area> (or use `muninn sync all`)")
        sync_mod.check_area(to)
        if not Path(src).is_dir():
            raise ConfigError("sync source is not a folder", path=src, fix="export into it first")
        passed = gate.check([(Path(src), sync_mod.local_files(Path(src)))])[0]
    with OpenViking.user(s) as client, _progress(json_out) as on_progress:
        if src == "all":
            reports = sync_mod.sync_all(client, s, prune=prune, on_progress=on_progress, replace=replace)
        else:
            reports = {to: sync_mod.sync(client, passed, to, prune, batch_size=s.export.batch_size,
                                         manifest_dir=s.paths.sync_manifests, on_progress=on_progress,
                                         settings=s, replace=replace)}
    if json_out:
        emit_json(reports[to].as_json() if src != "all" else {a: r.as_json() for a, r in reports.items()})
    else:
        table = Table("area", "written", "unchanged", "removed", "missing after wait", "conflicts")
        for area, r in reports.items():
            table.add_row(area, str(r.written), str(r.unchanged), str(r.removed), str(r.missing_after_wait),
                          str(len(r.conflicts)))
        console.print(table)
    total = {k: sum(getattr(r, k) for r in reports.values()) for k in ("written", "unchanged", "removed",
                                                                      "missing_after_wait")}
    say(f"sync: {len(reports)} area(s): {total['written']} written, {total['unchanged']} unchanged, "
        f"{total['removed']} removed, {total['missing_after_wait']} missing after wait")
    for area, r in reports.items():
        for rel in r.conflicts[:20]:
            why = "a reader changed muninn's file" if rel in r.edited else "a file muninn did not write holds this path"
            say(f"[yellow]conflict[/] {area}/{rel}: {why}; kept")
        for rel in r.missing[:20]:
            say(f"[red]missing[/] {area}/{rel}")
    if refused := billing.refused_during_command():
        raise refused       # files written whose vectors the door refused: not findable by meaning yet
    if any(r.missing_after_wait for r in reports.values()):
        raise sync_mod.SyncIncomplete("sync incomplete: files are missing after wait",
                                      fix="rerun `muninn sync`")
    conflicts = sum(len(r.conflicts) for r in reports.values())
    if conflicts:
        raise sync_mod.SyncConflict(f"sync kept {conflicts} file(s) whose server bytes muninn did not write",
                                    fix="fold the reader's change into the source, or rerun with --replace to "
                                        "overwrite it")


@app.command("move-to-root")
def move_to_root_cmd(ctx: typer.Context, json_out: bool = JsonOpt) -> None:
    """Move the server files of each source set to `name: .` from its old sub-folder to its area's root
    (viking://resources/notes/notes/x.md to viking://resources/notes/x.md): muninn's files, readers' edits
    and files written there directly. Each copy is read back before the old file goes; the sync manifest
    and every reader's keyword index follow, so the next `sync all` makes no second copy. A file whose new
    path holds other bytes, or that a reader changed while it moved, is kept and named (exit 19). Then run
    `muninn export all && muninn sync all`.
    Safe to run again."""
    from muninn.core.client import OpenViking
    from muninn.export import area_root

    s = settings(ctx)
    if not any(c.at_root for c in pipeline.configured(s, check_old=False)):
        raise ConfigError("no source in muninn.yaml is at its area's root", path=str(s.source_file or "muninn.yaml"),
                          fix="add `name: .` to the source whose files you want at the root (the notes), then "
                              "run this again")
    with OpenViking.user(s) as client:
        done = area_root.move(s, client)
    if json_out:
        emit_json([m.as_json() for m in done])
    for m in done:
        for old in m.kept:
            say(f"[yellow]kept[/] {old}: its new path already holds other bytes")
        for old in m.changed:
            say(f"[yellow]kept[/] {old}: a reader changed it while it moved")
    kept = sum(len(m.kept) + len(m.changed) for m in done)
    say(f"move-to-root: {sum(len(m.moved) for m in done)} file(s) moved, {kept} kept, in {len(done)} area(s)")
    if kept:
        raise sync_mod.SyncConflict(f"move-to-root kept {kept} file(s) at their old path (named above)",
                                    fix="for one whose new path holds other bytes, compare the two with `muninn "
                                        "read` and remove the one you do not want; then run it again")


class _progress:
    """A progress bar on stderr for long runs (over 200 files to write); silent for --json or short runs."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.bar: Progress | None = None
        self.task = None

    def __enter__(self):
        return self.update

    def update(self, done: int, total: int) -> None:
        if self.quiet or total <= 200:
            return
        if self.bar is None:
            self.bar = Progress(TextColumn("sync"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                                console=err_console, transient=True)
            self.bar.start()
            self.task = self.bar.add_task("sync", total=total)
        self.bar.update(self.task, completed=done, total=total)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
