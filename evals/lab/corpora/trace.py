"""Record what every ranking stage saw for each question, so fusion and rerank settings can be
replayed offline (replay.py) instead of re-running the server and the cross-encoder per setting.

For each question the product's own stages run up to and including linear fusion; then the
cross-encoder scores every candidate of the union (not only the first `rerank.candidates`), once.
Nothing here ranks: replay.py does, with the product's own fusion, blend, recency and cap code.
A question whose stages fell back (a busy sidecar skips linear fusion, a missing cross-encoder the
rerank) is marked `degraded`: replaying it would tune to the fallback, so replay.py refuses it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path
from typing import Any

from muninn.core import registry
from muninn.plugins.search.pipeline import Searcher, run, stage_switches
from muninn.plugins.search.request import SearchRequest
from muninn.plugins.search.stages.rerank_stage import rerank_text
from muninn.plugins.search.state import SearchState
from muninn.plugins.search.types import check_scores

RANKING = ("rerank", "recency", "pin", "cap")     # what replay.py redoes; everything before it is recorded


def before_ranking() -> tuple:
    stages = registry.stages()
    names = [s.name for s in stages]
    return tuple(stages[: min(names.index(n) for n in RANKING)])


def question(searcher: Searcher, text: str, target: str, now: dt.datetime | None) -> dict[str, Any]:
    """One question's candidates with every feature, the retrieval score and the cross-encoder's."""
    request = SearchRequest.resolve(searcher.cfg, stage_switches(), text, k=10, target=target, now=now, overrides={})
    state = SearchState(request=request, searcher=searcher)
    run(before_ranking(), state)
    model = searcher.reranker()
    ce: list[float] = []
    if model is not None and state.fused:
        terms = state.analysis.terms if state.analysis else []
        texts = [rerank_text(state.docs[c.uri], state.ranking.content_chars, terms, state.ranking.passage_window)
                 for c in state.fused]
        ce = check_scores(model.name, model.rerank(text, texts), len(texts))
    if model is None:
        state.warn(f"no cross-encoder: {searcher.rerank_problem}")
    # Where each candidate stood in each retriever's list: a trace recorded with longer lists can be
    # replayed as if they were shorter.
    ranks = {name: {x.uri: i for i, x in enumerate(found)} for name, found in state.lists.items()}
    cands = []
    for i, c in enumerate(state.fused):
        d = state.docs[c.uri]
        cands.append({"uri": c.uri, "score": c.score, "ce": ce[i] if ce else None,
                      "lists": {name: at[c.uri] for name, at in ranks.items() if c.uri in at},
                      "features": {name: vals[c.uri] for name, vals in state.features.items() if c.uri in vals},
                      "date": d.date.isoformat() if d.date else None, "file": d.file_key})
    return {"route": state.route, "window": state.window is not None, "linear": bool(state.features),
            "reranker": (getattr(model, "model", None) or model.name) if model is not None else None,
            "features": sorted(state.features), "now": request.now.isoformat(), "cands": cands,
            "warnings": state.warnings, "degraded": bool(state.warnings)}


def export_path(exports: Path, uri: str) -> Path:
    """viking://resources/corpora/<run>/... -> EXPORTS/corpora/<run>/... (the harness's export folder)."""
    return exports / uri.split("://", 1)[1].split("/", 1)[1]


def lab_args(description: str) -> argparse.ArgumentParser:
    """The arguments every offline lab over traces takes: the traces, where its own go, the harness's cache."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("traces", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--work", type=Path, default=None, help="the harness's work folder (default <cache>/work)")
    return ap


def write(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
