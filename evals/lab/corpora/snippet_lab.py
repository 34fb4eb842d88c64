"""Does a hit's snippet show the answer? Offline, from the corpora's own fact files: no server.

    python -m muninn.evals.lab.corpora.snippet_lab [CORPUS ...] [--traces DIR] [--cache DIR]

Each corpus's facts are rendered as the exporter writes them and parsed as search reads them
(plugins/search/doc.py). For every question with an `answer`, the snippet of its right fact is cut with
the query's terms exactly as the pipeline cuts it (pipeline._cut), and checked for the answer
(whitespace-insensitive), both whole (`Hit.snippet`, what an agent reads) and as `muninn search` prints it.
With `--traces` (trace.py's CORPUS.jsonl), only questions whose right fact the replayed defaults put in
the top 4 count, and the snippet is the one of the best-ranked right fact there.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from muninn.core.config import Settings
from muninn.evals.lab.corpora import replay, sources, trace
from muninn.evals.lab.corpora.questions import norm
from muninn.export import sources as export_sources
from muninn.export.facts import render, unique_paths
from muninn.plugins.search import doc as docmod
from muninn.plugins.search import query
from muninn.plugins.search import render as render_mod
from muninn.plugins.search.types import Hit

DOCUMENTATION = ["debian-handbook", "postgresql", "debian-reference"]


@dataclass
class Tally:
    questions: int = 0
    whole: int = 0          # the answer is in Hit.snippet
    printed: int = 0        # ... and in what `muninn search` prints
    title_repeats: int = 0  # snippets that say the hit's title more than once
    chars: int = 0

    def row(self, name: str) -> str:
        n = max(self.questions, 1)
        return (f"| {name} | {self.questions} | {self.whole} ({self.whole / n:.0%}) | {self.printed} "
                f"({self.printed / n:.0%}) | {self.title_repeats} | {self.chars / n:.0f} |")


def tail(uri: str) -> str:
    """A corpus URI without its run's random root: `<area>/<name>/<path>.md`."""
    return uri.split("://", 1)[-1].split("/", 3)[-1]


def docs_of(built: sources.Built) -> dict[str, docmod.Doc]:
    out = {}
    for s in built.sources:
        for f in unique_paths(export_sources.build(s.kind, s.path, s.options or None).facts()):
            key = f"{s.area}/{s.name or s.kind}/{f.path}.md"
            out[key] = docmod.parse(f"viking://resources/corpora/lab/{key}", render(f).text)
    return out


def top4(records: list[dict], settings: Settings) -> dict[str, list[str]]:
    """question id -> the right facts (URI tails) in the replayed defaults' top 4, best first."""
    s = replay.Setting.of(settings.search, settings.ranking)
    cfg = s.cfg(settings.search)
    out = {}
    for rec in records:
        gold = set(rec["gold"])
        out[rec["id"]] = [tail(u) for u in replay.rank(rec, s, cfg)[:4] if u in gold]
    return out


def measure(name: str, cache: Path | None, settings: Settings, traces: Path | None, chars: int) -> Tally:
    built = sources.build(name, cache)
    docs = docs_of(built)
    window = settings.ranking.passage_window
    ranked = top4(trace.read(traces / f"{name}.jsonl"), settings) if traces else None
    tally = Tally()
    for q in built.questions.questions:
        if q.answer is None:
            continue
        want = norm(q.answer)
        right = ranked.get(q.id, []) if ranked is not None else [k for k, d in docs.items() if want in norm(d.body)]
        if not right:
            continue
        d = docs[right[0]]
        snip = docmod.snippet(d, chars, terms=query.analyse(q.question).terms, window=window)
        hit = Hit(uri=d.uri, title=d.title, breadcrumb=d.breadcrumb, score=0.0, stage_scores={}, date=None,
                  snippet=snip, source=d.source)
        tally.questions += 1
        tally.whole += want in norm(snip)
        tally.printed += want in norm(render_mod.shown(hit))
        tally.title_repeats += snip.count(d.title) > 1
        tally.chars += len(snip)
    return tally


def main(argv: list[str] | None = None) -> int:
    from muninn.core import config

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpora", nargs="*", default=DOCUMENTATION)
    ap.add_argument("--traces", type=Path, help="trace.py's CORPUS.jsonl: count only right facts in the top 4")
    ap.add_argument("--cache", type=Path, help="downloads and converted trees (default ~/.cache/muninn/corpora)")
    ap.add_argument("--chars", type=int, default=docmod.SNIPPET_CHARS, help="the snippet's bound")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    settings = config.load()   # the run that recorded --traces ranked with these
    rows = {name: measure(name, args.cache, settings, args.traces, args.chars) for name in args.corpora}
    if args.json:
        print(json.dumps({n: vars(t) for n, t in rows.items()}))
        return 0
    print("| corpus | questions | answer in snippet | answer in what `search` prints | title said twice | "
          "mean chars |\n|---|---|---|---|---|---|")
    for name, t in rows.items():
        print(t.row(name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
