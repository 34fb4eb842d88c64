"""`muninn eval` and `muninn demo`."""

from __future__ import annotations

from pathlib import Path

import typer

from muninn.core.cliutil import JsonOpt, Progress, config_path, console, emit_json, err_console, say, settings
from muninn.evals import report
from muninn.plugins.search.flags import Switches, switch_flags

app = typer.Typer()


@app.command("eval")
@switch_flags
def eval_cmd(
    ctx: typer.Context,
    set_name: str = typer.Option("ops", "--set", help="A shipped set name (evals/questions/NAME.yaml) or a path."),
    k: int = typer.Option(4, "-k", min=1, help="A question counts as found when an expected file is in the top k."),
    label: str = typer.Option("", help="A name for this run in the comparison and the plot, e.g. 'before-fusion'."),
    switches: Switches = None,  # type: ignore[assignment]  (one --no-<switch> flag per stage switch)
    plot: Path = typer.Option(None, help="Where to write the PNG (default <workspace>/evals/<set>.png)."),
    profile: str = typer.Option(None, help="Ask as this reader: a real MCP client, recall_search through the "
                                "guard (its own history)."),
    max_drop: int = typer.Option(0, min=0, help="Questions hit@k may lose against the last run before exit 16."),
    max_mrr_drop: float = typer.Option(0.02, min=0.0, help="MRR it may lose before exit 16."),
    save: bool = typer.Option(None, "--save/--no-save", help="Keep this run as the baseline the next run is "
                              "compared with (default: kept, except with --json)."),
    json_out: bool = JsonOpt,
) -> None:
    """Run the sealed question set through the same search path every reader uses, and compare with
    the last run of the same set. Run it before and after every change: it exits 16 when the run
    lost to the last one beyond --max-drop / --max-mrr-drop (a kept run is kept either way).

    A run with --json is for a script and is not kept (nor plotted), so it never moves the next run's
    baseline; pass --save to keep it.

    Editing a question set unseals it: the next run says so instead of comparing.

    Examples: `muninn eval`, `muninn eval --profile raven`, `muninn eval --no-rerank --label no-rerank`.
    """
    flags = {name: False for name, value in switches.items() if value is False}
    out = err_console if json_out else console
    bar: list[Progress] = []

    def progress(total: int, question: str) -> None:
        if not bar:
            bar.append(Progress("eval", total))
        bar[0].tick(question)

    try:
        run, lost = report.eval_and_compare(settings(ctx), out, set_name, k, label, plot, progress=progress,
                                            profile=profile, config_path=config_path(ctx), max_drop=max_drop,
                                            max_mrr_drop=max_mrr_drop, keep=not json_out if save is None else save,
                                            **flags)
    finally:
        for b in bar:
            b.close()
    say(f"eval {run.set_name}: {len(run.outcomes)} questions in {run.seconds:.1f} s; hit@{run.k} "
        f"{run.hits_at(run.k)}/{len(run.outcomes)}, hit@1 {run.hits_at(1)}, MRR {run.mrr():.3f}")
    if json_out:
        emit_json({**run.summary(), "regressed": lost or None, "outcomes": [o.__dict__ for o in run.outcomes]})
    if lost:
        raise report.EvalRegressed(f"the {run.set_name} set lost to its last run: {lost}",
                                   fix="see the questions marked worse above; pass --max-drop if the loss is intended")


@app.command("demo")
def demo_cmd(ctx: typer.Context) -> None:
    """The main job on the sample corpus: stack up, policy applied, vault filled, sources exported
    (redacted, leak-gated) and synced, one search through the guarded MCP server, the sealed eval.

    Run it as `muninn --config examples/muninn.yaml demo` (what `make demo` does).
    """
    from muninn.evals import demo

    run = demo.run(settings(ctx), config_path(ctx), console, say)
    say(f"demo done: hit@{run.k} {run.hits_at(run.k)}/{len(run.outcomes)}, MRR {run.mrr():.3f}")
