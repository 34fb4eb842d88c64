"""Where right answers are lost (issue 48's loss table): each question of a same_data sync through the product's
stages one by one, the right fact's place noted after each ranking step.

    python -m muninn.evals.lab.corpora.loss_lab STATE.json OUT.json [--k 4]

Per question: `candidates` (a right fact is in some candidate list at all), then whether one is in the first
k after fusion (linear fusion, and one place per section when ranking.unit is section), after the rerank
(with recency and pins) and after the per-file cap (the page). A loss is charged to the first step that
takes the right answer out of the first k: candidates, fusion, rerank or cap. The unit of
ranking follows the settings (MUNINN_SEARCH__RANKING__UNIT=section for sections).
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
from concurrent import futures
from pathlib import Path

STEPS = ("candidates", "fusion", "rerank", "cap")
# After which stage each step is read (the last stage of it that ran).
AFTER = {"fusion": ("fusion", "linear", "sections"), "rerank": ("rerank", "recency", "pin"), "cap": ("cap",)}


def lost_at(seen: dict[str, bool]) -> str | None:
    """The first step whose check fails; None when the answer is on the page."""
    return next((s for s in STEPS if not seen[s]), None)


def main() -> None:
    from muninn.core import config, registry
    from muninn.core.client import OpenViking
    from muninn.evals.lab.corpora import harness, same_data
    from muninn.plugins.search.pipeline import Searcher, stage_switches
    from muninn.plugins.search.request import SearchRequest
    from muninn.plugins.search.state import SearchState

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("state", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--k", type=int, default=4)
    args = ap.parse_args()
    state_json = json.loads(args.state.read_text())
    settings = config.load()
    result: dict = {}
    with OpenViking(settings.server.base_url, state_json["key"], key_name=state_json["account"]) as client:
        for name, c in state_json["corpora"].items():
            cfg = harness.corpus_settings(settings, same_data._built(name), c["root"], Path(c["work"]))
            now = dt.datetime.fromisoformat(c["now"]) if c["now"] else None
            rows = []
            with Searcher(cfg, client=client) as searcher:
                for q in c["questions"]:
                    gold = set(q["gold"])
                    req = SearchRequest.resolve(searcher.cfg, stage_switches(), q["q"], k=harness.K,
                                                target=c["root"], now=now, overrides={})
                    st = SearchState(request=req, searcher=searcher)
                    seen = {s: False for s in STEPS}
                    for stage in registry.stages():
                        if stage.switch is not None and not req.on(stage.switch.name):
                            continue
                        if not stage.applies(st):
                            continue
                        stage.run(st)
                        st.timings[stage.name] = 0.0
                        top = {x.uri for x in st.fused[:args.k]}
                        if stage.name == "scope" or (stage.name == "reach" and searcher.readable is None):
                            seen["candidates"] = bool(gold & {x.uri for ls in st.lists.values() for x in ls})
                        for step, names in AFTER.items():
                            if stage.name in names:
                                seen[step] = bool(gold & top)
                    if not seen["candidates"]:
                        seen["candidates"] = bool(gold & {x.uri for ls in st.lists.values() for x in ls})
                    # A step that did not run keeps the verdict of the step before it.
                    for prev, step in itertools.pairwise(STEPS):
                        if not any(n in st.timings for n in AFTER[step]):
                            seen[step] = seen[prev]
                    futures.wait(st.query_vectors.values(), timeout=searcher.cfg.timeout)
                    rows.append({"id": q["id"], "kind": q["kind"], **seen, "lost_at": lost_at(seen)})
            result[name] = rows
            args.out.write_text(json.dumps(result, indent=1))
            print(f"{name}: {sum(r['lost_at'] is None for r in rows)} of {len(rows)} at hit@{args.k}", flush=True)


if __name__ == "__main__":
    main()
