"""`muninn bench`: one command for every benchmark figure (issue 19)."""

from __future__ import annotations

from pathlib import Path

import typer

from muninn.core.cliutil import say

app = typer.Typer()


@app.command("bench")
def bench_cmd(
    quick: bool = typer.Option(False, "--quick", help="Small sizes: a few minutes on a quiet machine once the "
                               "stack is up."),
    smoke: bool = typer.Option(False, "--smoke", help="Each section once at the smallest sizes: checks that the "
                               "bench runs end to end (the tests run it); its figures are not worth quoting."),
    out: Path = typer.Option(None, "--out", help="Where to write the report (default "
                             "evals/results/benchmarks.md)."),
    section: list[str] = typer.Option([], "--section", metavar="TITLE", help="Only this section (repeatable), "
                                      "plus the files and index it searches, e.g. --section 'Batch vs serial'."),
) -> None:
    """Measure stack start, embeddings/s, write-to-searchable, search by stage, rerank by candidate count
    and its levers, a fresh CLI, export and redaction MB/s, guard overhead, masking MB/s, the verify
    sweep and each nightly job, on a stack of its own (temporary workspace, free ports).

    Writes a markdown report with the machine, the date and the load average per section, and ratios
    against OpenViking find alone, BM25 alone and a plain regex redactor measured in the same run.
    """
    from muninn.evals import bench, bench_levers

    unknown = [t for t in section if t not in bench.SECTIONS]
    if unknown:
        raise typer.BadParameter(f"no section {unknown[0]!r}; one of: " + ", ".join(bench.SECTIONS),
                                 param_hint="--section")
    if quick and smoke:
        raise typer.BadParameter("choose one of --quick and --smoke", param_hint="--smoke")
    size = bench.SMOKE if smoke else bench.QUICK if quick else bench.FULL
    path = bench.run(size, out or bench.RESULTS, levers=bench_levers.measure, sections=section)
    say(f"wrote {path}")
