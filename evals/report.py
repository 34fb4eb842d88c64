"""Running a sealed set through the real search path, and showing what changed since last time."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from muninn.core.config import Settings
from muninn.core.errors import ExitCode, MuninnError
from muninn.evals import sealed
from muninn.plugins.search.pipeline import Searcher


def set_path(name_or_path: str) -> Path:
    path = Path(name_or_path)
    return path if path.suffix in (".yaml", ".yml") else sealed.QUESTIONS_DIR / f"{name_or_path}.yaml"


def runs_dir(settings: Settings) -> Path:
    return settings.paths.evals


def run_through_search(settings: Settings, path: Path, k: int, label: str,
                       progress: Callable[[int, str], None] | None = None, **flags: Any) -> sealed.EvalRun:
    """The same pipeline every reader uses (`muninn search`), one Searcher for the whole set, several
    questions at once as `muninn search --batch` asks them (search.batch_workers)."""
    from muninn.plugins.search import batch

    with Searcher(settings) as searcher:
        def search(query: str, k: int) -> list[dict]:
            result = searcher.search(query, k=k, **flags)
            return [h.to_dict() for h in result.hits]

        workers = batch.workers(settings.search.batch_workers)
        searcher.at_once(workers)
        return sealed.run(path, search, k=k, label=label, progress=progress, workers=workers)


class EvalRegressed(MuninnError):
    """The run lost to the last run of the same sealed set by more than the allowed drop."""

    exit_code = ExitCode.EVAL_REGRESSED


def run_through_guard(config_path: Path | None, profile: str, path: Path, k: int, label: str,
                      progress: Callable[[int, str], None] | None = None, **flags: Any) -> sealed.EvalRun:
    """The set as a reader asks it: one real MCP client over stdio, `recall_search` per question,
    so the guard's areas, labels and redaction are part of what is measured."""
    import os
    import sys

    from anyio.from_thread import start_blocking_portal
    from mcp import Client, StdioServerParameters

    args = ["-m", "muninn", *(["--config", str(config_path)] if config_path else []), "mcp", "--profile", profile]
    params = StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ))
    with start_blocking_portal() as portal, \
            portal.wrap_async_context_manager(Client(params, read_timeout_seconds=300)) as client:
        def search(query: str, k: int) -> list[dict]:
            result = portal.call(client.call_tool, "recall_search", {"query": query, "k": k, **flags})
            if result.is_error:
                text = " ".join(c.text for c in result.content if getattr(c, "type", "") == "text")
                raise MuninnError(f"recall_search as {profile} failed: {text}",
                                  fix="check the profile with `muninn policy show` and the stack with `muninn status`")
            return list((result.structured_content or {}).get("hits", []))

        run = sealed.run(path, search, k=k, label=label, progress=progress)
    run.set_name = f"{run.set_name}@{profile}"      # its own history: a reader sees only its areas
    return run


def regression(previous: sealed.EvalRun, current: sealed.EvalRun, max_drop: int, max_mrr_drop: float) -> str:
    """Why `current` lost to `previous` beyond the allowed drop, or "" when it did not."""
    k = current.k
    lost = previous.hits_at(k) - current.hits_at(k)
    mrr = previous.mrr() - current.mrr()
    said = []
    if lost > max_drop:
        said.append(f"hit@{k} fell from {previous.hits_at(k)} to {current.hits_at(k)} (allowed drop {max_drop})")
    if mrr > max_mrr_drop + 1e-9:
        said.append(f"MRR fell from {previous.mrr():.3f} to {current.mrr():.3f} (allowed drop {max_mrr_drop:g})")
    return "; ".join(said)


def summary_table(runs: list[sealed.EvalRun]) -> Table:
    table = Table("run", "questions", f"hit@{runs[-1].k}", "hit@1", "MRR", "seconds")
    for r in runs:
        s = r.summary()
        n = s["questions"]
        table.add_row(s["label"] or "-", str(n), f"{s[f'hit@{r.k}']}/{n}", f"{s['hit@1']}/{n}", f"{s['mrr']:.3f}",
                      f"{s['seconds']:.1f}")
    return table


def eval_and_compare(settings: Settings, console: Console, set_name: str = "ops", k: int = 4, label: str = "",
                     plot: Path | None = None, progress: Callable[[int, str], None] | None = None, *,
                     profile: str | None = None, config_path: Path | None = None,
                     max_drop: int = 0, max_mrr_drop: float = 0.02, keep: bool = True,
                     **flags: Any) -> tuple[sealed.EvalRun, str]:
    """Run the set, compare with the last run of the same set, and (`keep`) save and plot it. Returns the
    run and why it lost to the last one beyond the allowed drop ("" when it did not); a kept run is kept
    either way, so the next change compares with it."""
    path = set_path(set_name)
    sealed.load_set(path)     # a bad question file is exit 2 with its line, before any key or server
    if profile:
        current = run_through_guard(config_path, profile, path, k, label, progress=progress, **flags)
    else:
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
    if keep:
        sealed.save(current, folder)
        png = sealed.plot([*[r for r in history if r.set_sha256 == current.set_sha256][-7:], current],
                          plot or folder / f"{current.set_name}.png")
        console.print(f"plot: {png}")
    else:
        console.print("not kept: the next run compares with the last kept one (--save keeps a --json run)")
    why = regression(previous, current, max_drop, max_mrr_drop) if previous and previous.k == current.k else ""
    return current, why
