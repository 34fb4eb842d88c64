"""Levers for buried facts and worded-apart questions that need no new model, measured on recorded traces
(trace.py) and chosen by leaving one corpus out.

    python -m muninn.evals.lab.corpora.lever_lab TRACES SCRATCH --work WORK --model-dir E5 \\
        [--runs corpora.json] [--lever rm3 headings rocchio windows trust] [--set keyword_weight=1]

A lever adds candidate lists and features to a recorded question (`Plan`); the new candidates get the
features the product computes (BM25 from the run's own keyword index, e5 cosines of the same texts the
sidecar embeds, the header and date matches), and the cross-encoder scores any that reach fusion's head.
Ranking is replay.py's, the product's own code. Each fold chooses a lever's value on the other corpora
(mean of hit@4, hit@10 and MRR) and scores it on the one left out, beside the defaults and the best plain
retriever of the same run.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np

from muninn.core import factfile
from muninn.core.config import EmbedSettings, SearchSettings
from muninn.evals.lab.corpora import lever_data, replay, sources
from muninn.plugins.search import query
from muninn.plugins.search import ranking as order
from muninn.plugins.search.stages.rerank_stage import rerank_text
from muninn.plugins.search.types import Candidate

MANUALS = ("debian-handbook", "postgresql", "debian-reference")


@dataclass
class Question:
    rec: dict[str, Any]
    text: str
    analysis: query.Analysis
    sought: query.Analysis
    match: str
    qvec: np.ndarray
    qvec2: np.ndarray | None = None     # under embed.second_model

    @property
    def open_to_levers(self) -> bool:
        """Levers touch fused questions only: an identifier lookup keeps BM25's order."""
        return self.rec["linear"] and self.rec["route"] == "hybrid"


@dataclass
class Plan:
    lists: dict[str, list[str]] = field(default_factory=dict)          # extra candidate lists, best first
    features: dict[str, Callable[[list[str]], dict[str, float]]] = field(default_factory=dict)


# --- the levers -------------------------------------------------------------------------------------

def _expansion(c: lever_data.Corpus, q: Question, terms: list[str], weight: float) -> Plan:
    """BM25 again with the expansion terms: their own list (the question's words OR theirs) and their BM25
    as a feature of its own, so its weight in fusion is RM3's interpolation."""
    if not terms:
        return Plan()
    exp = " OR ".join(f'"{t}"' for t in terms)
    both = f"{q.match} OR {exp}" if q.match else exp
    listed = [x.uri for x in c.index.candidates(both, c.target, 20)]
    feats = {"expansion": lambda uris: c.index.scores(exp, uris)} if weight else {}
    return Plan(lists={"expansion": listed}, features=feats)


def rm3(c: lever_data.Corpus, q: Question, k: int, m: int, weight: float) -> Plan:
    """Relevance model over BM25's top k: a term's weight is its share of each feedback fact, weighted by
    the fact's BM25, times its IDF in the corpus; the m best not already asked."""
    fb = sorted((x for x in q.rec["cands"] if x["lists"].get("keyword", k) < k), key=lambda x: x["lists"]["keyword"])
    if not fb:
        return Plan()
    total = sum(max(x["features"].get("keyword", 0.0), 0.0) for x in fb) or 1.0
    asked = set(q.analysis.terms) | set(lever_data.tokens(q.text))
    got: Counter[str] = Counter()
    for x in fb:
        toks = lever_data.tokens(c.docs[x["uri"]].fact or c.docs[x["uri"]].body)
        share = max(x["features"].get("keyword", 0.0), 0.0) / total
        for t, n in Counter(toks).items():
            if t not in asked:
                got[t] += share * n / max(len(toks), 1) * c.idf(t)
    return _expansion(c, q, [t for t, _ in got.most_common(m)], weight)


def headings(c: lever_data.Corpus, q: Question, h: int, weight: float) -> Plan:
    """The words of the corpus's h headings nearest the question (e5 cosine), as expansion terms."""
    names, mat = c.heading_vecs()
    near = np.argsort(-(mat @ q.qvec))[:h]
    asked = set(q.analysis.terms) | set(lever_data.tokens(q.text))
    terms = list(dict.fromkeys(t for i in near for t in lever_data.tokens(names[i]) if t not in asked))
    return _expansion(c, q, terms, weight)


def rocchio(c: lever_data.Corpus, q: Question, k: int, beta: float, mode: str) -> Plan:
    """The question's vector moved toward the mean of fusion's first k candidates' vectors: the cosines
    re-scored with it ("rescore"), and/or its nearest facts as a list of their own ("list")."""
    top = [x["uri"] for x in q.rec["cands"][:k]]
    moved = q.qvec + beta * c.file_vecs(top).mean(axis=0)
    moved /= np.linalg.norm(moved)
    plan = Plan()
    if mode in ("list", "both"):
        plan.lists["rocchio"] = [c.uris[i] for i in np.argsort(-(c.file_vecs(c.uris) @ moved))[:20]]
    if mode in ("rescore", "both"):
        plan.features["vector"] = lambda uris: dict(zip(uris, (c.file_vecs(uris) @ moved).tolist(), strict=True))
        plan.features["fact"] = lambda uris: dict(zip(uris, (c.fact_vecs(uris) @ moved).tolist(), strict=True))
    return plan


def windows(c: lever_data.Corpus, q: Question, n: int, weight: float) -> Plan:
    """Several vectors a fact (its paragraphs packed into 600-character windows under the breadcrumb):
    the facts whose best window is nearest the question as a list, and that best cosine as a feature."""
    best = c.best_windows(q.qvec)
    plan = Plan(lists={"windows": [c.uris[i] for i in np.argsort(-best)[:n]]} if n else {})
    if weight:
        at = {u: i for i, u in enumerate(c.uris)}
        plan.features["window"] = lambda uris: {u: float(best[at[u]]) for u in uris}
    return plan


def second_list(c: lever_data.Corpus, q: Question, n: int) -> Plan:
    """The second model as a candidate source of its own: the n facts nearest the question under it (a brute
    scan of its vectors, as a reader's local cache holds them), not only a feature of the others' candidates."""
    if c.second is None or q.qvec2 is None:
        return Plan()
    near = np.argsort(-(c.second_vecs(c.uris) @ q.qvec2))[:n]
    return Plan(lists={"second": [c.uris[i] for i in near]})


def second_text(c: lever_data.Corpus, q: Question, text: str) -> Plan:
    """The second model's cosine of another text of each candidate: "no context" (breadcrumb and fact, as the
    plain baselines read a section) or "fact" (the fact alone), in place of the file's embed text."""
    if c.second is None or q.qvec2 is None:
        return Plan()

    def read(u: str) -> str:
        ff = factfile.parse(c.docs[u].text)
        head = factfile.CRUMB.join(ff.breadcrumb) or ff.title
        return "\n\n".join(x for x in ((head, ff.body) if text == "no context" else (ff.body,)) if x.strip())

    def cosines(uris: list[str]) -> dict[str, float]:
        assert c.second is not None and q.qvec2 is not None
        return dict(zip(uris, (c.second.get([read(u) for u in uris]) @ q.qvec2).tolist(), strict=True))
    return Plan(features={"second": cosines})


# lever name -> [(label, plan maker, extra weights)]
def lever_grid(name: str) -> list[tuple[str, Callable[[lever_data.Corpus, Question], Plan], tuple]]:
    out: list = []
    if name == "rm3":
        for k, m, w in product((3, 10), (5, 15), (0.0, 0.5, 1.0)):
            out.append((f"rm3 k {k}, {m} terms, weight {w:g}", lambda c, q, k=k, m=m, w=w: rm3(c, q, k, m, w),
                        (("expansion", w),)))
    elif name == "headings":
        for h, w in product((1, 3, 5), (0.0, 0.5, 1.0)):
            out.append((f"headings {h}, weight {w:g}", lambda c, q, h=h, w=w: headings(c, q, h, w),
                        (("expansion", w),)))
    elif name == "rocchio":
        for k, b, mode in product((3, 10), (0.5, 1.0), ("rescore", "list", "both")):
            out.append((f"rocchio k {k}, beta {b:g}, {mode}",
                        lambda c, q, k=k, b=b, mode=mode: rocchio(c, q, k, b, mode), ()))
    elif name == "second":
        for n in (5, 10, 20, 40):
            out.append((f"second list {n}", lambda c, q, n=n: second_list(c, q, n), ()))
    elif name == "second-text":
        for text in ("no context", "fact"):
            out.append((f"second reads {text}", lambda c, q, text=text: second_text(c, q, text), ()))
    elif name == "windows":
        for n, w in product((0, 10, 20, 40), (0.0, 0.5, 1.0, 2.0)):
            if n or w:
                out.append((f"windows {n}, weight {w:g}", lambda c, q, n=n, w=w: windows(c, q, n, w),
                            (("window", w),)))
    return out


# --- applying a plan ----------------------------------------------------------------------------------

class Applier:
    """A plan's candidates and features put into a copy of the recorded question, the cross-encoder's
    scores filled for whatever reaches fusion's head."""

    def __init__(self, c: lever_data.Corpus, cfg: SearchSettings, ce_store: dict[str, float], model: Any) -> None:
        self.c, self.cfg, self.ce, self.model = c, cfg, ce_store, model
        self.scored = 0

    def features(self, q: Question, uris: list[str]) -> dict[str, dict[str, float]]:
        """The product's fusion features of these candidates (features.py), computed offline."""
        c, out = self.c, {}
        out["keyword"] = c.index.scores(q.match, uris)
        out["vector"] = dict(zip(uris, (c.file_vecs(uris) @ q.qvec).tolist(), strict=True))
        out["fact"] = dict(zip(uris, (c.fact_vecs(uris) @ q.qvec).tolist(), strict=True))
        if "second" in q.rec["features"] and c.second is not None and q.qvec2 is not None:
            out["second"] = dict(zip(uris, (c.second_vecs(uris) @ q.qvec2).tolist(), strict=True))
        if "header" in q.rec["features"]:
            terms = q.analysis.terms
            named = set(terms) & set().union(*(c.docs[u].header_words for u in uris))
            shares = c.index.header_share(sorted(named)) if named else {}
            facets = {w for w, s in shares.items() if s >= replay.profile(self.cfg).header_min_share}
            out["header"] = {u: c.docs[u].header_match(terms, facets) for u in uris} if facets else {}
        if "date" in q.rec["features"] and q.analysis.window is not None:
            slack = replay.profile(self.cfg).date_slack_days
            out["date"] = {u: q.analysis.window.match(c.docs[u].date, slack) for u in uris}
        return out

    def apply(self, q: Question, plan: Plan) -> dict[str, Any]:
        rec = copy.deepcopy(q.rec)
        if not q.open_to_levers or not (plan.lists or plan.features):
            return rec
        by_uri = {x["uri"]: x for x in rec["cands"]}
        new = []
        for name, listed in plan.lists.items():
            for i, u in enumerate(listed):
                if u not in by_uri:
                    d = self.c.docs[u]
                    by_uri[u] = {"uri": u, "score": 0.0, "ce": None, "lists": {}, "features": {},
                                 "date": d.date.isoformat() if d.date else None, "file": d.file_key}
                    rec["cands"].append(by_uri[u])
                    new.append(u)
                by_uri[u]["lists"][name] = i
        uris = list(by_uri)
        if new:
            for name, vals in self.features(q, new).items():
                if name in rec["features"]:
                    for u in new:
                        if u in vals:
                            by_uri[u]["features"][name] = vals[u]
        for name, make in plan.features.items():
            vals = make(uris)
            for u in uris:
                by_uri[u]["features"].pop(name, None)
                if u in vals:
                    by_uri[u]["features"][name] = vals[u]
            rec["features"] = sorted({*rec["features"], name})
        return rec

    def with_ce(self, q: Question, rec: dict[str, Any], s: replay.Setting) -> dict[str, Any]:
        """The cross-encoder's score for every candidate of fusion's head under `s` (scored once, kept)."""
        cfg = s.cfg(self.cfg)
        kept = [x for x in rec["cands"] if replay.within(x, {"vector": cfg.vector_top, "keyword": cfg.keyword_top})]
        feats = {n: {x["uri"]: x["features"][n] for x in kept if n in x["features"]} for n in rec["features"]}
        if not replay.profile(cfg).header_weight:
            feats.pop("header", None)
        head = order.linear([Candidate(uri=x["uri"]) for x in kept], feats,
                             replay.fusion_weights(cfg, s))[:cfg.rerank.candidates]
        want = [x.uri for x in head if next(y for y in kept if y["uri"] == x.uri)["ce"] is None]
        keys = {u: f"{self.c.name}|{rec['id']}|{u}" for u in want}
        todo = [u for u in want if keys[u] not in self.ce]
        if todo:
            r = replay.profile(cfg)
            texts = [rerank_text(self.c.docs[u], r.content_chars, q.analysis.terms, r.passage_window)
                     for u in todo]
            self.ce.update(zip((keys[u] for u in todo), self.model.rerank(q.text, texts), strict=True))
            self.scored += len(todo)
        for x in rec["cands"]:
            if x["ce"] is None:
                x["ce"] = self.ce.get(keys.get(x["uri"], ""), 0.0)
        return rec


# --- choosing by leaving one corpus out ---------------------------------------------------------------

def scores_of(firsts: list[int | None]) -> dict[str, float]:
    n = max(len(firsts), 1)
    out = {f"hit@{k}": sum(1 for f in firsts if f is not None and f < k) / n for k in (1, 4, 10)}
    out["MRR"] = sum(1 / (f + 1) for f in firsts if f is not None) / n
    out["n"] = len(firsts)
    return out


def firsts(recs: list[dict[str, Any]], s: replay.Setting, base: SearchSettings) -> list[int | None]:
    return replay.firsts(recs, s, base)


def loco(table: dict[str, dict[str, dict[str, float]]], names: list[str]) -> list[tuple[str, str]]:
    """(left out, label chosen on the others) for each corpus."""
    out = []
    for held in names if len(names) > 1 else ():
        rest = [n for n in names if n != held]
        out.append((held, max(table, key=lambda lab: statistics.mean(replay.objective(table[lab][n]) for n in rest))))
    return out


def plain_best(runs: list[Path]) -> dict[str, tuple[str, dict[str, float]]]:
    """The best single retriever or plain baseline of the recorded runs, per corpus (by hit@4, then hit@10)."""
    out = {}
    for r in (r for path in runs for r in json.loads(path.read_text())):
        plain = {v: m for v, m in r["variants"].items()
                 if v in ("vectors only", "keyword only") or v.startswith("dense ") or v == "BM25 baseline"}
        if plain:
            v = max(plain, key=lambda v: (plain[v]["hit@4"], plain[v]["hit@10"]))
            out[r["name"]] = (v, plain[v])
    return out


def cell(m: dict[str, float]) -> str:
    return f"{m['hit@4']:.3f} / {m['hit@10']:.3f} / {m['MRR']:.3f}"


def markdown(lever: str, table: dict[str, dict[str, dict[str, float]]], names: list[str], default: str,
             plain: dict[str, tuple[str, dict[str, float]]]) -> str:
    lines = [f"#### {lever}", "", "| left out | chosen on the others | held out hit@4 / @10 / MRR | defaults | "
             "best plain retriever | Δ questions @4 / @10 |", "| --- | --- | --- | --- | --- | --- |"]
    for held, lab in loco(table, names):
        h, d = table[lab][held], table[default][held]
        n = d["n"]
        p = f"{plain[held][0]}: {plain[held][1]['hit@4']:.3f} / {plain[held][1]['hit@10']:.3f}" if held in plain else ""
        delta = f"{round((h['hit@4'] - d['hit@4']) * n):+d} / {round((h['hit@10'] - d['hit@10']) * n):+d}"
        lines.append(f"| {held} | {lab} | {cell(h)} | {cell(d)} | {p} | {delta} |")
    return "\n".join(lines)


def verdict(table: dict[str, dict[str, dict[str, float]]], names: list[str], default: str) -> str:
    """Taken only if it gains held out on the manuals and loses no more than one question elsewhere."""
    gain, worst = 0, 0
    for held, lab in loco(table, names):
        h, d = table[lab][held], table[default][held]
        n = d["n"]
        d4, d10 = round((h["hit@4"] - d["hit@4"]) * n), round((h["hit@10"] - d["hit@10"]) * n)
        if held in MANUALS:
            gain += d4 + d10
            worst = min(worst, d4, d10) if d4 + d10 < 0 else worst
        else:
            worst = min(worst, d4, d10)
    return "takes" if gain > 0 and worst >= -1 else f"not taken (manuals {gain:+d} questions over both cut-offs, " \
        f"worst elsewhere {worst:+d})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m muninn.evals.lab.corpora.lever_lab",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("traces", type=Path)
    ap.add_argument("scratch", type=Path, help="copies of the run's indexes, vectors and scores computed here")
    ap.add_argument("--work", type=Path, nargs="+", required=True,
                    help="the recorded runs' harness work folders (each corpus's is the one holding it)")
    ap.add_argument("--model-dir", type=Path, required=True, help="the e5-small-v2 model folder")
    ap.add_argument("--runs", type=Path, nargs="*", default=[],
                    help="the recorded runs' corpora.json (for the best plain retriever)")
    ap.add_argument("--lever", nargs="+", default=["trust", "rocchio", "rm3", "headings", "windows"])
    ap.add_argument("--set", nargs="*", default=["keyword_weight=1"], metavar="FIELD=VALUE",
                    help="search settings the run was recorded with (default: e5's keyword weight 1)")
    ap.add_argument("--corpora", nargs="*", help="only these (default: every trace)")
    ap.add_argument("--second", action="store_true",
                    help="the runs fused with embed.second_model (its vectors from each run's cache)")
    ap.add_argument("--out", type=Path, help="append the tables to this markdown file")
    ap.add_argument("--labels", nargs="*", help="only the grid's settings whose label holds one of these")
    args = ap.parse_args(argv)
    from muninn.plugins.search import rerank

    base = SearchSettings(ranking={k: float(v) for k, v in (x.split("=", 1) for x in args.set)})
    current = replay.Setting.of(base)
    corpora = replay.load(args.traces, 0.02)
    if args.corpora:
        corpora = {n: r for n, r in corpora.items() if n in args.corpora}
    names = list(corpora)
    embed_cfg = EmbedSettings(model="intfloat/e5-small-v2", model_name="e5-small-v2")
    second_cfg = embed_cfg.second if args.second else None
    ce_path = args.scratch / "ce.json"
    ce_store: dict[str, float] = json.loads(ce_path.read_text()) if ce_path.exists() else {}
    model = rerank.load(base.rerank)
    plain = plain_best(args.runs)
    report = []
    opened: dict[str, tuple[lever_data.Corpus, list[Question], Applier]] = {}
    for name, recs in corpora.items():
        work = next((w for w in args.work if (w / name / "keyword.sqlite").exists()), args.work[0])
        c = lever_data.open_corpus(name, work, args.scratch, embed_cfg, args.model_dir, second_cfg)
        asked = {q.id: q.question for q in sources.questions(name).questions}
        qs = []
        for rec in recs:
            text = asked[rec["id"]]
            analysis = query.analyse(text, today=replay.dt.datetime.fromisoformat(rec["now"]).date())
            sought = analysis.without_dates() if rec["window"] else analysis
            qs.append(Question(rec, text, analysis, sought, query.fts_query(sought),
                               c.vectors.get([sought.query], "query")[0],
                               c.second.get([sought.query], "query")[0] if c.second else None))
        opened[name] = (c, qs, Applier(c, base, ce_store, model))
        # The machinery's own check: the recorded features recomputed offline, and an empty plan ranking
        # as the recorded question does.
        diffs = []
        for q in qs:
            uris = [x["uri"] for x in q.rec["cands"]]
            if q.open_to_levers and uris:
                got = opened[name][2].features(q, uris)
                for x in q.rec["cands"]:
                    for f in ("vector", "fact", "keyword", "second"):
                        if f in x["features"]:
                            diffs.append(abs(x["features"][f] - got[f].get(x["uri"], 0.0)))
        print(f"{name}: {len(qs)} questions, features recomputed: max |diff| {max(diffs, default=0):.2e}, "
              f"{c.vectors.embedded} texts embedded", flush=True)
    for lever in args.lever:
        table: dict[str, dict[str, dict[str, float]]] = {}
        default = "defaults"
        table[default] = {n: scores_of(firsts(corpora[n], current, base)) for n in names}
        settings: list[tuple[str, Callable[[str], dict[str, float]]]] = []
        if lever == "trust":
            for bl, mc, cand in product((0.0, 0.25, 0.5, 1.0, 2.0, 4.0), (0.0, 0.01, 0.05, 0.1, 0.2, 0.5),
                                        (4, 10, 20)):
                s = replace(current, blend=bl, min_confidence=mc, candidates=cand)
                settings.append((s.label(), lambda n, s=s: scores_of(firsts(corpora[n], s, base))))
            off = replace(current, rerank=False)
            settings.append((off.label(), lambda n, s=off: scores_of(firsts(corpora[n], s, base))))
        for label, make, extra in lever_grid(lever):
            if args.labels and not any(x in label for x in args.labels):
                continue
            s = replace(current, extra=tuple(x for x in extra if x[1]))

            def score(n: str, make: Callable = make, s: replay.Setting = s) -> dict[str, float]:
                c, qs, app = opened[n]
                return scores_of(firsts([app.with_ce(q, app.apply(q, make(c, q)), s) for q in qs], s, base))
            settings.append((label, score))
        for label, score in settings:
            table[label] = {}
            for n in names:
                kept = args.scratch / n / "scores.json"
                known = json.loads(kept.read_text()) if kept.exists() else {}
                if label not in known:
                    known[label] = score(n)
                    kept.write_text(json.dumps(known))
                table[label][n] = known[label]
            if lever != "trust":
                print(f"  {label}: " + ", ".join(f"{n} {cell(table[label][n])}" for n in names), flush=True)
                for n in names:
                    opened[n][0].vectors.save() if opened[n][0].vectors.embedded else None
                ce_path.write_text(json.dumps(ce_store))
        text = markdown(lever, table, names, default, plain) + f"\n\nverdict: {verdict(table, names, default)}\n"
        print(text, f"(cross-encoder pairs scored so far: {sum(o[2].scored for o in opened.values())})", flush=True)
        report.append(text)
        (args.scratch / f"{lever}.json").write_text(json.dumps(table))
    if args.out:
        with args.out.open("a", encoding="utf-8") as f:
            f.write("\n\n".join(report) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
