"""`muninn skills install`: put a skill where agents load it, and approve it by content."""

from __future__ import annotations

import typer

from muninn.core.cliutil import JsonOpt, console, emit_json, settings

app = typer.Typer(help="Skills agents load from viking://agent/skills, approved by content.", no_args_is_help=True)


@app.command("install")
def install(
    ctx: typer.Context,
    skills: list[str] = typer.Argument(None, help="Skills muninn ships, by name, or skill folders (each with a "
                                       "SKILL.md). Default: every skill muninn ships."),
    json_out: bool = JsonOpt,
) -> None:
    """Write each skill into viking://agent/skills/<name>/, read it back, and add `name@sha256:<hash>` to
    the approved list in <home>/skills/approved.json, which the nightly skills-drift check reads: a skill
    that is not on it, or whose content changed since, is drift.

    Example: muninn skills install observation-log
    """
    from muninn.nightly import skills_install

    s = settings(ctx)
    names = skills or list(skills_install.packaged())
    done = [skills_install.install(s, what) for what in names]
    if json_out:
        emit_json(done)
        return
    for d in done:
        console.print(f"{d['name']}: {d['uri']} ({len(d['files'])} file(s)), approved as {d['sha256']}",
                      highlight=False, markup=False, soft_wrap=True)
