"""Same synced data, two codes (issue 46: behaviour unchanged): sync the harness corpora once, then search
them with whichever muninn is on sys.path (run once per code's venv) and write every question's top-10;
`compare` counts identical lists and the hits by question kind. A fresh harness run syncs a fresh account,
and a fresh sync can flip ties; this compares two codes on one sync. Keep the server quiet while both run:
files still being indexed into the same server move its approximate vector search's candidates.

    python -m muninn.evals.lab.corpora.same_data sync STATE.json CORPUS ...
    python -m muninn.evals.lab.corpora.same_data search STATE.json OUT.json [VARIANT ...]
    python -m muninn.evals.lab.corpora.same_data compare A.json B.json
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import time
import uuid
from pathlib import Path

CACHE = Path(os.environ.get("MUNINN_CORPORA_CACHE", Path.home() / ".cache/muninn/corpora"))


def _built(name: str):
    from muninn.evals.lab.corpora import sources
    return sources.build(name, CACHE, {})


def sync(state_path: str, names: list[str]) -> None:
    from muninn.core import config
    from muninn.core.client import OpenViking
    from muninn.evals.lab.corpora import harness
    settings = config.load()
    root = OpenViking.root(settings)
    account = f"samesync{uuid.uuid4().hex[:8]}"
    try:
        key = root.create_account(account, "owner")
    finally:
        root.close()
    state = {"account": account, "key": key, "corpora": {}}
    with OpenViking(settings.server.base_url, key, key_name=account) as client:
        for name in names:
            built = _built(name)
            area = f"{harness.ROOT}/{uuid.uuid4().hex[:6]}"
            secs = harness.sections(built, area)
            qs = built.questions.questions
            golds = [sorted(harness.gold(q, secs)) for q in qs]
            work = CACHE / "samesync" / name
            cfg = harness.corpus_settings(settings, built, area, work)
            t = time.time()
            stats = harness.export_and_sync(cfg, client, lambda m: print(m, file=sys.stderr))
            print(f"{name}: {stats} in {time.time() - t:.0f} s", file=sys.stderr, flush=True)
            state["corpora"][name] = {"root": area, "work": str(work), "now": built.now,
                                      "questions": [{"id": q.id, "q": q.question, "kind": q.label or q.kind,
                                                     "gold": g} for q, g in zip(qs, golds, strict=True)]}
            Path(state_path).write_text(json.dumps(state, indent=1))


def search(state_path: str, out: str, variants: list[str]) -> None:
    from muninn.core import config
    from muninn.core.client import OpenViking
    from muninn.evals.lab.corpora import harness
    from muninn.plugins.search.pipeline import Searcher
    state = json.loads(Path(state_path).read_text())
    settings = config.load()
    result: dict = {}
    with OpenViking(settings.server.base_url, state["key"], key_name=state["account"]) as client:
        for name, c in state["corpora"].items():
            built = _built(name)
            cfg = harness.corpus_settings(settings, built, c["root"], Path(c["work"]))
            now = dt.datetime.fromisoformat(c["now"]) if c["now"] else None
            with Searcher(cfg, client=client) as searcher:
                for variant in variants:
                    flags = harness.VARIANTS[variant]
                    rows = []
                    for q in c["questions"]:
                        r = searcher.search(q["q"], k=harness.K, target=c["root"], now=now, **flags)
                        rows.append({"id": q["id"], "kind": q["kind"], "gold": q["gold"],
                                     "uris": [h.uri for h in r.hits], "scores": [round(h.score, 6) for h in r.hits],
                                     "route": getattr(r, "route", None)})
                    result.setdefault(name, {})[variant] = rows
                    print(f"{name} {variant}: {len(rows)} q", file=sys.stderr, flush=True)
                    Path(out).write_text(json.dumps(result, indent=1, default=str))   # as it goes


def _first(uris: list[str], gold: list[str]) -> int | None:
    return next((i for i, u in enumerate(uris) if u in gold), None)


def compare(a_path: str, b_path: str) -> None:
    a, b = json.loads(Path(a_path).read_text()), json.loads(Path(b_path).read_text())
    a = {n: {v: rows for v, rows in vs.items() if v in b.get(n, {})} for n, vs in a.items() if n in b}
    print("| corpus | variant | questions | identical top-10 | hit@4 before / after | hit@10 before / after |")
    print("| --- | --- | --- | --- | --- | --- |")
    kinds_rows = []
    for name in a:
        for variant, rows in a[name].items():
            other = b[name][variant]
            same = sum(x["uris"] == y["uris"] for x, y in zip(rows, other, strict=True))
            h = {}
            for tag, rs in (("a", rows), ("b", other)):
                firsts = [_first(r["uris"], r["gold"]) for r in rs]
                h[tag] = (sum(f is not None and f < 4 for f in firsts), sum(f is not None for f in firsts))
                kinds: dict[str, list[int]] = {}
                for r, f in zip(rs, firsts, strict=True):
                    k = kinds.setdefault(r["kind"], [0, 0, 0])
                    k[0] += 1
                    k[1] += f is not None and f < 4
                    k[2] += f is not None
                if tag == "a":
                    kinds_rows.append((name, variant, kinds))
            n = len(rows)
            hits = f"{h['a'][0]} / {h['b'][0]} | {h['a'][1]} / {h['b'][1]}"
            print(f"| {name} | {variant} | {n} | {same} / {n} | {hits} |")
            for x, y in zip(rows, other, strict=True):
                if x["uris"] != y["uris"]:
                    print(f"  differs: {name} {variant} {x['id']}", file=sys.stderr)
    print("\n| corpus | variant | kind | questions | hit@4 | hit@10 |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, variant, kinds in kinds_rows:
        for kind, (n, h4, h10) in sorted(kinds.items()):
            print(f"| {name} | {variant} | {kind} | {n} | {h4} | {h10} |")


def timing(state_path: str, out: str, corpus: str, n: int) -> None:
    """Per-query wall time of OpenViking's find alone (the peer), search without and with rerank, on one
    corpus's first `n` questions: appended to OUT as one JSON line per run."""
    from muninn.core import config
    from muninn.core.client import OpenViking
    from muninn.evals.lab.corpora import harness
    from muninn.plugins.search.pipeline import Searcher
    state = json.loads(Path(state_path).read_text())
    settings = config.load()
    c = state["corpora"][corpus]
    qs = [q["q"] for q in c["questions"]][:n]
    def ms(f) -> float:
        t = time.perf_counter()
        f()
        return (time.perf_counter() - t) * 1000
    with OpenViking(settings.server.base_url, state["key"], key_name=state["account"]) as client:
        cfg = harness.corpus_settings(settings, _built(corpus), c["root"], Path(c["work"]))
        with Searcher(cfg, client=client) as searcher:
            for rerank in (False, True):
                searcher.search("warm up the model and the caches", target=c["root"], rerank=rerank)
            row = {"find": [ms(lambda q=q: client.find(q, c["root"], limit=cfg.search.vector_top)) for q in qs]}
            for rerank in (False, True):
                row["rerank" if rerank else "no-rerank"] = [
                    ms(lambda q=q, r=rerank: searcher.search(q, k=harness.K, target=c["root"], rerank=r)) for q in qs]
    with open(out, "a") as f:
        f.write(json.dumps({"code": sys.prefix, **row}) + "\n")


if __name__ == "__main__":
    cmd, *rest = sys.argv[1:]
    if cmd == "sync":
        sync(rest[0], rest[1:])
    elif cmd == "search":
        search(rest[0], rest[1], rest[2:] or ["defaults", "--no-rerank"])
    elif cmd == "time":
        timing(rest[0], rest[1], rest[2], int(rest[3]))
    else:
        compare(rest[0], rest[1])
