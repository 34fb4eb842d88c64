"""The harness's report: a markdown table per corpus, a JSON of every rank, and one plot."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from muninn.evals.lab.corpora.baselines import is_baseline
from muninn.evals.lab.corpora.harness import CorpusRun

SINGLE = ("vectors only", "keyword only")
# Questions a fresh sync can move on its own (the find issue allows one a corpus).
NOISE = 1


def gate(runs: list[CorpusRun], noise: int = NOISE) -> list[str]:
    """Where the defaults lose, at hit@4 or hit@10, to the best rival by more than `noise` questions: the
    rivals are the single retrievers and every plain baseline (dense with each embedder, BM25). Empty when
    the defaults hold on every corpus that ran them."""
    out = []
    for r in runs:
        d = r.variants.get("defaults")
        rivals = {n: m for n, m in r.variants.items() if n in SINGLE or is_baseline(n)}
        if not d or not rivals:
            continue
        n = d["n"]
        for key in ("hit@4", "hit@10"):
            best = max(rivals, key=lambda v: rivals[v][key])
            mine, theirs = round(d[key] * n), round(rivals[best][key] * n)
            if mine + noise < theirs:
                out.append(f"{r.name}: defaults {key} {d[key]:.3f} ({mine} of {n}) < {best} "
                           f"{rivals[best][key]:.3f} ({theirs} of {n}), beyond {noise} question(s) of noise")
    return out


def table(runs: list[CorpusRun]) -> str:
    lines = []
    for r in runs:
        lines += [f"### {r.name}", "",
                  f"{r.origin}; {r.facts} facts, {r.questions} questions; export + sync "
                  f"{r.seconds.get('export+sync', 0):.0f} s.", "",
                  "| variant | n | hit@1 | hit@4 | hit@10 | MRR@10 | p50 ms |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for name, m in r.variants.items():
            label = f"*{name}*" if is_baseline(name) else name
            ms = f"{m['p50_ms']:.0f}" if m.get("p50_ms") else "-"
            lines.append(f"| {label} | {m['n']} | {m['hit@1']:.3f} | {m['hit@4']:.3f} | {m['hit@10']:.3f} "
                         f"| {m['MRR']:.3f} | {ms} |")
        kinds = sorted({k for v in r.by_kind.values() for k in v})
        if len(kinds) > 1:
            lines += ["", "hit@4 by kind of question:", "",
                      "| variant | " + " | ".join(kinds) + " |", "| --- |" + " --- |" * len(kinds)]
            for name, per in r.by_kind.items():
                lines.append(f"| {name} | " + " | ".join(f"{per.get(k, 0):.2f}" for k in kinds) + " |")
        if r.warnings:
            lines += ["", "Notes: " + "; ".join(sorted(set(r.warnings)))[:900]]
        lines.append("")
    failed = gate(runs)
    lines.append(f"**Gate** (defaults ≥ the best single retriever or plain baseline at hit@4 and hit@10, "
                 f"less {NOISE} question of noise): "
                 + ("holds on every corpus." if not failed else "fails: " + "; ".join(failed) + "."))
    return "\n".join(lines)


BEGIN, END = "<!-- corpora:begin (written by python -m muninn.evals.lab.corpora run) -->", "<!-- corpora:end -->"


def write_markdown(runs: list[CorpusRun], path: Path, command: str) -> Path:
    """The tables go between the markers of `path`; what is around them (findings) is kept."""
    block = f"{BEGIN}\n\n`{command}`\n\n{table(runs)}\n{END}"
    old = path.read_text() if path.exists() else f"# Search on several corpora\n\n{BEGIN}\n{END}\n"
    if BEGIN in old and END in old:
        new = old[:old.index(BEGIN)] + block + old[old.index(END) + len(END):]
    else:
        new = old.rstrip() + "\n\n" + block + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(new)
    return path


def write_json(runs: list[CorpusRun], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([asdict(r) for r in runs], indent=1))
    return path


def read_json(path: Path) -> list[CorpusRun]:
    return [CorpusRun(**r) for r in json.loads(path.read_text())]


def write_all(runs: list[CorpusRun], out: Path, command: str) -> None:
    write_markdown(runs, out / "corpora.md", command)
    write_json(runs, out / "corpora.json")
    plot(runs, out / "corpora.png")


def plot(runs: list[CorpusRun], path: Path) -> Path:
    """hit@4 and hit@10 of every variant and baseline, one panel per corpus."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(runs), figsize=(4.2 * len(runs), 4.2), squeeze=False, sharey=True)
    for ax, r in zip(axes[0], runs, strict=True):
        names = list(r.variants)
        xs = range(len(names))
        ax.bar([x - 0.2 for x in xs], [r.variants[n]["hit@4"] for n in names], 0.4, label="hit@4")
        ax.bar([x + 0.2 for x in xs], [r.variants[n]["hit@10"] for n in names], 0.4, label="hit@10")
        ax.set_xticks(list(xs), names, rotation=35, ha="right", fontsize=8)
        ax.set_title(f"{r.name} ({r.questions} q, {r.facts} facts)", fontsize=9)
        ax.set_ylim(0, 1.05)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
