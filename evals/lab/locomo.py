"""LoCoMo, stage by stage: each conversation is its own corpus, converted to a notes tree (one turn a
note) and exported by the product's notes exporter, written into a fresh OpenViking account; questions
of categories 1-4 run through the real search pipeline in each variant of the ladder below. (The
corpora harness, evals/lab/corpora, runs the same conversations beside documentation corpora.)

A question is found at k when a file holding one of its evidence turns is in the top k.
Metrics per variant: hit@4, hit@10, recall@20 (share of evidence turns in the top 20), MRR@10.

    python -m muninn.evals.lab.locomo --conversations 26 30 --json report.json --plot locomo.png

The dev half lives in ../shared/datasets/locomo-dev; the other half is held out and must not be
tuned on, so only general choices live here. The fact files are the exporter's: this module writes none.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import statistics
import tempfile
import uuid
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from muninn.core import config
from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.core.ranking_profile import NAMES
from muninn.evals import lab
from muninn.evals.lab.corpora import locomo_notes
from muninn.export import pipeline as export_pipeline
from muninn.plugins.search import keyword
from muninn.plugins.search.pipeline import Searcher

DATA = lab.REPO.parent / "shared" / "datasets" / "locomo-dev"
ROOT = "viking://resources/locomo"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

# name -> per-call switches (None = as configured) and setting overrides. Rerank runs whatever
# `search.rerank` resolves to: on a machine with no hub, the packaged ms-marco-MiniLM-L-12-v2.
_OFF = dict(routing=False, recency=False, rerank=False, dates=False)
VARIANTS: dict[str, dict] = {
    "vector only": dict(hybrid=False, **_OFF),
    "+ keyword fusion (plain RRF)": dict(hybrid=True, **_OFF, set={"fusion": "rrf", "keyword_weight": 1.0}),
    "+ keyword weight 2 (RRF)": dict(hybrid=True, **_OFF, set={"fusion": "rrf", "keyword_weight": 2.0}),
    "+ linear fusion (BM25, file and fact cosines)": dict(hybrid=True, **_OFF,
                                                          set={"fusion": "linear", "header_weight": 0.0}),
    "+ header match": dict(hybrid=True, **_OFF, set={"fusion": "linear"}),
    "+ dates the query names": dict(hybrid=True, routing=False, recency=False, rerank=False),
    "+ routing": dict(hybrid=True, routing=True, recency=False, rerank=False),
    "+ recency": dict(hybrid=True, routing=True, recency=True, rerank=False),
    "+ rerank (= the defaults)": dict(hybrid=True, routing=True, recency=True, rerank=True),
}


def corpus(conv: dict, conv_id: str) -> dict[str, str]:
    """The conversation the product's way: a notes tree (one turn a note, evals/lab/corpora/locomo_notes)
    exported by the notes exporter (redaction, leak gate, the one fact format). URI -> fact file."""
    files = {}
    with tempfile.TemporaryDirectory() as tmp:
        tree, out = Path(tmp, "notes"), Path(tmp, "facts")
        locomo_notes.convert(conv, tree)
        export_pipeline.run("notes", tree, out)
        for path in sorted(out.rglob("*.md")):
            files[f"{ROOT}/{conv_id}/{path.relative_to(out).as_posix()}"] = path.read_text(encoding="utf-8")
    return files


def turn_key(uri_or_file: str) -> str:
    """`.../session-01/turn-003.md` -> `session-01/turn-003.md`: what evidence and hits are matched on."""
    return "/".join(uri_or_file.rsplit("/", 2)[-2:])


def questions(conv: dict) -> list[dict]:
    out = []
    for q in conv["qa"]:
        if q.get("category") not in CATEGORIES:
            continue
        ids = {e for ev in q.get("evidence", []) for e in re.findall(r"D\d+:\d+", ev)}
        if ids:
            out.append({"question": q["question"], "category": q["category"], "evidence": ids})
    return out


def ingest(client: OpenViking, files: dict[str, str], conv_id: str, db: Path, chunk: int = 50) -> None:
    folder = f"{ROOT}/{conv_id}"
    client.ensure_dir(ROOT)
    client.ensure_dir(folder)
    names = list(files)
    for i in range(0, len(names), chunk):
        client.batch_write(folder, {n: files[n] for n in names[i:i + chunk]}, wait=True)
    client.wait()
    keyword.index_facts(db, files)


def first_ranks(ranked: list[list[str]], gold: list[set[str]]) -> list[int | None]:
    """0-based rank of the first evidence file in each result list, None when it is not there."""
    out = []
    for uris, want in zip(ranked, gold, strict=True):
        ids = [turn_key(u) for u in uris]
        out.append(next((i for i, u in enumerate(ids) if u in want), None))
    return out


def metrics(ranked: list[list[str]], gold: list[set[str]]) -> dict[str, float]:
    hit4 = hit10 = rec20 = mrr = 0.0
    for uris, want, first in zip(ranked, gold, first_ranks(ranked, gold), strict=True):
        ids = [turn_key(u) for u in uris]
        hit4 += first is not None and first < 4
        hit10 += first is not None and first < 10
        rec20 += len(want & set(ids[:20])) / len(want)
        mrr += 1.0 / (first + 1) if first is not None and first < 10 else 0.0
    n = max(len(gold), 1)
    return {"hit@4": hit4 / n, "hit@10": hit10 / n, "recall@20": rec20 / n, "MRR@10": mrr / n}


def run(settings: Settings, conv_ids: list[str], variants: dict[str, dict], workdir: Path,
        data: Path = DATA) -> dict:
    """Each conversation `data/<id>.json` into its own folder of a fresh account, then every
    question through every variant. Needs the stack up (`muninn up`) and the root key."""
    root = OpenViking.root(settings)
    account = f"locomo{uuid.uuid4().hex[:8]}"
    client = OpenViking(settings.server.base_url, root.create_account(account, "owner"), key_name=account)
    per_variant: dict[str, dict[str, list]] = {v: {"ranked": [], "gold": [], "cat": [], "ms": [], "asked": []}
                                               for v in variants}
    convs = {c: json.loads((data / f"{c}.json").read_text()) for c in conv_ids}
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=Console(stderr=True)) as bar:       # stopped on an error too
        task = bar.add_task("locomo", total=sum(len(questions(c)) for c in convs.values()) * len(variants))
        for conv_id, conv in convs.items():
            files = corpus(conv, conv_id)
            db = workdir / f"locomo-{account}-{conv_id}.sqlite"
            bar.update(task, description=f"{conv_id}: writing {len(files)} files")
            ingest(client, files, conv_id, db)
            qs = questions(conv)
            last = max(locomo_notes.session_date(v) for k, v in conv.items() if k.endswith("_date_time"))
            now = last.replace(tzinfo=dt.UTC) + dt.timedelta(days=1)       # the conversation's "today"
            for name, flags in variants.items():
                flags = dict(flags)
                tuned = with_search(settings, flags.pop("set", {}))
                bar.update(task, description=f"{conv_id}: {name}")
                with Searcher(tuned, client=client, index=db) as searcher:
                    for q in qs:
                        res = searcher.search(q["question"], k=20, target=f"{ROOT}/{conv_id}", now=now, **flags)
                        rec = per_variant[name]
                        rec["ranked"].append([h.uri for h in res.hits])
                        rec["gold"].append({locomo_notes.turn_file(e) for e in q["evidence"]})
                        rec["cat"].append(q["category"])
                        rec["ms"].append(sum(res.timings_ms.values()))
                        rec["asked"].append((conv_id, q["question"]))
                        bar.advance(task)
    report = {"conversations": conv_ids, "variants": {}}
    for name, rec in per_variant.items():
        entry = metrics(rec["ranked"], rec["gold"])
        entry["n"] = len(rec["gold"])
        entry["p50_ms"] = statistics.median(rec["ms"]) if rec["ms"] else 0.0
        entry["by_category"] = {
            CATEGORIES[c]: metrics([r for r, cc in zip(rec["ranked"], rec["cat"], strict=True) if cc == c],
                                   [g for g, cc in zip(rec["gold"], rec["cat"], strict=True) if cc == c])["hit@4"]
            for c in CATEGORIES}
        report["variants"][name] = entry
    report["ranks"] = [{"variant": name, "conversation": c, "question": q, "category": cat, "first": first}
                       for name, rec in per_variant.items()
                       for (c, q), cat, first in zip(rec["asked"], rec["cat"], first_ranks(rec["ranked"], rec["gold"]),
                                                     strict=True)]
    client.close()
    root.close()
    return report


def table(report: dict) -> str:
    head = "| variant | n | hit@4 | hit@10 | recall@20 | MRR@10 | " + " | ".join(
        f"hit@4 {c}" for c in CATEGORIES.values()) + " | p50 ms |"
    rows = [head, "|" + "---|" * (head.count("|") - 1)]
    for name, e in report["variants"].items():
        cats = " | ".join(f"{e['by_category'][c]:.3f}" for c in CATEGORIES.values())
        rows.append(f"| {name} | {e['n']} | {e['hit@4']:.3f} | {e['hit@10']:.3f} | {e['recall@20']:.3f} | "
                    f"{e['MRR@10']:.3f} | {cats} | {e['p50_ms']:.0f} |")
    return "\n".join(rows)


def plot(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(report["variants"])
    metrics_ = ["hit@4", "hit@10", "recall@20", "MRR@10"]
    fig, ax = plt.subplots(figsize=(12, 4.8))
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        values = [report["variants"][name][m] for m in metrics_]
        bars = ax.bar([j + i * width for j in range(len(metrics_))], values, width, label=name)
        # three decimals: at two, 0.897 would read as the 0.90 target
        ax.bar_label(bars, fmt="%.3f", fontsize=6, rotation=90, padding=2)
    ax.set_xticks([j + width * (len(names) - 1) / 2 for j in range(len(metrics_))], metrics_)
    ax.set_ylim(0, 1.08)
    for y, label in ((0.75, "target hit@4 0.75"), (0.90, "target hit@10 0.90")):
        ax.axhline(y, color="grey", lw=0.6, ls="--" if y < 0.8 else ":")
        ax.text(len(metrics_) - 0.2, y + 0.005, label, fontsize=7, color="grey", ha="right", va="bottom")
    ax.set_title(f"LoCoMo dev, conversations {', '.join(report['conversations'])}, categories 1-4 "
                 f"(n={report['variants'][names[0]]['n']})")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))   # outside: never over a bar
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def with_search(settings: Settings, overrides: dict) -> Settings:
    """Settings with `search` overrides applied; `rerank.blend` style keys reach the nested section."""
    flat = {k.split(".", 1)[-1]: v for k, v in overrides.items()}
    ranked = {k: v for k, v in flat.items() if k in NAMES}      # the ranking profile's (core/ranking_profile.py)
    top = {k: v for k, v in overrides.items() if "." not in k and k not in NAMES}
    nested = {k[7:]: v for k, v in overrides.items() if k.startswith("rerank.") and k[7:] not in NAMES}
    if unknown := [k for k in overrides if "." in k and not k.startswith("rerank.")]:
        raise SystemExit(f"unknown nested search setting(s): {', '.join(unknown)}")
    if ranked:
        top["ranking"] = {**settings.search.ranking, **ranked}
    search = settings.search.model_copy(update=top)
    if nested:
        search = search.model_copy(update={"rerank": search.rerank.model_copy(update=nested)})
    return settings.model_copy(update={"search": search})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", nargs="+", default=["26", "30", "41", "42", "43"])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS))
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a search setting for every variant, e.g. --set vector_top=40 "
                        "or --set rerank.blend=0.5")
    parser.add_argument("--try", dest="tries", action="append", default=[], metavar="NAME:KEY=VALUE,...",
                        help="one more variant: the defaults plus these search settings")
    parser.add_argument("--json", type=Path, help="also write the raw report here")
    parser.add_argument("--plot", type=Path, help="bar chart of the variants (PNG)")
    parser.add_argument("--ranks", type=Path, help="also write each question's first evidence rank per variant "
                        "(JSON lines), to see which questions a change moved")
    parser.add_argument("--replot", type=Path, metavar="REPORT.json",
                        help="only draw --plot again from a report written by --json (no server needed)")
    args = parser.parse_args()
    if args.replot:
        if not args.plot:
            raise SystemExit("--replot needs --plot PATH.png")
        plot(json.loads(args.replot.read_text()), args.plot)
        return
    settings = config.load()
    overrides = {k: json.loads(v) for k, v in (s.split("=", 1) for s in args.set)}
    settings = with_search(settings, overrides)
    workdir = settings.paths.evals
    workdir.mkdir(parents=True, exist_ok=True)
    variants = {v: VARIANTS[v] for v in args.variants}
    for spec in args.tries:
        name, _, pairs = spec.partition(":")
        extra = {k: json.loads(v) for k, v in (p.split("=", 1) for p in pairs.split(",") if p)}
        variants[name] = {**VARIANTS["+ rerank (= the defaults)"], "set": extra}
    report = run(settings, args.conversations, variants, workdir)
    report["overrides"] = overrides
    print(f"conversations {' '.join(args.conversations)}, overrides {overrides or '-'}\n")
    print(table(report))
    ranks = report.pop("ranks")
    if args.ranks:
        args.ranks.write_text("".join(json.dumps(r) + "\n" for r in ranks))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    if args.plot:
        plot(report, args.plot)


if __name__ == "__main__":
    main()
