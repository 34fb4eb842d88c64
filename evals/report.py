"""Running a sealed set through the real search path, and showing what changed since last time."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from muninn.core.config import Settings
from muninn.evals import sealed
from muninn.plugins.search.pipeline import Searcher


def set_path(name_or_path: str) -> Path:
    path = Path(name_or_path)
    return path if path.suffix in (".yaml", ".yml") else sealed.QUESTIONS_DIR / f"{name_or_path}.yaml"


def runs_dir(settings: Settings) -> Path:
    return settings.paths.evals


def run_through_search(settings: Settings, path: Path, k: int, label: str,
                       progress: Callable[[int, str], None] | None = None, **flags: Any) -> sealed.EvalRun:
    """The same pipeline every reader uses (`muninn search`), one Searcher for the whole set."""
    with Searcher(settings) as searcher:
        def search(query: str, k: int) -> list[dict]:
            result = searcher.search(query, k=k, **flags)
            return [h.to_dict() for h in result.hits]

        return sealed.run(path, search, k=k, label=label, progress=progress)


def summary_table(runs: list[sealed.EvalRun]) -> Table:
    table = Table("run", "questions", f"hit@{runs[-1].k}", "hit@1", "MRR", "seconds")
    for r in runs:
        s = r.summary()
        n = s["questions"]
        table.add_row(s["label"] or "-", str(n), f"{s[f'hit@{r.k}']}/{n}", f"{s['hit@1']}/{n}", f"{s['mrr']:.3f}",
                      f"{s['seconds']:.1f}")
    return table


def eval_and_compare(settings: Settings, console: Console, set_name: str = "ops", k: int = 4, label: str = "",
                     plot: Path | None = None, progress: Callable[[int, str], None] | None = None,
                     **flags: Any) -> sealed.EvalRun:
    path = set_path(set_name)
    current = run_through_search(settings, path, k, label, progress=progress, **flags)
    folder = runs_dir(settings)
    history = sealed.history(folder, current.set_name)
    previous = next((r for r in reversed(history) if r.set_sha256 == current.set_sha256), None)
    if history and previous is None:
        console.print("[yellow]the question set changed since the last run: it is unsealed, no comparison[/]")
    rows = [previous, current] if previous else [current]
    console.print(summary_table(rows))
    if previous:
        _, changes = sealed.compare(previous, current)
        moved = [c for c in changes if c.verdict != "same"]
        for c in moved:
            console.print(f"  {c.id}: rank {c.before or '-'} → {c.after or '-'} ({c.verdict})")
        if not moved:
            console.print("  no question changed rank")
    misses = [o for o in current.outcomes if o.rank is None or o.rank > k]
    for o in misses:
        console.print(f"  [red]miss[/] {o.id}: {o.question!r} → top was {o.top[:1]}", highlight=False)
    sealed.save(current, folder)
    png = sealed.plot([*[r for r in history if r.set_sha256 == current.set_sha256][-7:], current],
                      plot or folder / f"{current.set_name}.png")
    console.print(f"plot: {png}")
    return current
