"""The cross-encoder reads the query whole against each of the first `rerank.candidates` fused
candidates; its score, blended with the fusion score and the features that have a blend, orders them."""

from __future__ import annotations

import math
from collections.abc import Sequence

from muninn.core import registry
from muninn.core.config import RerankSettings, SearchSettings
from muninn.plugins.search import doc as docmod
from muninn.plugins.search import fusion, passage
from muninn.plugins.search import rerank as rerank_mod
from muninn.plugins.search.request import Switch
from muninn.plugins.search.state import SearchState
from muninn.plugins.search.types import Candidate, check_scores


class Rerank:
    name = "rerank"
    switch = Switch("rerank", "Skip the cross-encoder: fusion order.", setting=lambda cfg: cfg.rerank.enabled)

    def applies(self, state: SearchState) -> bool:
        return bool(state.fused) and (state.cfg.rerank.identifiers or state.route != "keyword")

    def run(self, state: SearchState) -> None:
        searcher, cfg = state.searcher, state.cfg.rerank
        model = searcher.reranker()
        if model is None:
            state.warn(f"rerank skipped, results are in fusion order: {searcher.rerank_problem}")
            return
        split = read_by_reranker(state.fused, cfg)
        if split is None:
            return
        head, tail = split
        terms = state.analysis.terms if state.analysis else []
        texts = [rerank_text(state.docs[c.uri], state.cfg.content_chars, terms, cfg.passage_window) for c in head]
        try:
            scores = check_scores(model.name, model.rerank(state.request.text, texts), len(texts))
        except rerank_mod.RerankUnavailable as exc:
            state.warn(f"rerank skipped, results are in fusion order: {exc}")
            return
        for c, s in zip(head, scores, strict=True):
            c.stage_scores["rerank"] = round(s, 5)
        state.reranked_by = getattr(model, "model", None) or model.name
        if max(scores, default=0.0) < cfg.min_confidence:
            # Unsure of every candidate (on manuals the packaged ms-marco model often is): its order
            # is noise there, and fusion's is kept. Its scores stay on the hits as their relevance.
            if cfg.unsure_weights and state.features:     # linear fusion ran: fuse again, as configured
                weights = {f.name: f.weight(state.cfg) for f in registry.features() if f.name in state.features}
                state.fused = fusion.linear(state.fused, state.features, {**weights, **cfg.unsure_weights})
            return
        shown = {f.name: [state.features.get(f.name, {}).get(c.uri, 0.0) for c in head] for f in registry.features()}
        blended = blend([c.score for c in head], scores, state.cfg, shown)
        state.fused = reorder(head, tail, blended)


def read_by_reranker(fused: list[Candidate], cfg: RerankSettings) -> tuple[list[Candidate], list[Candidate]] | None:
    """(what the cross-encoder reads, what follows it in fusion order), or None when fusion's margin is
    decisive. Latency levers, off by default (docs/configuration.md): `skip_margin` (the first fused candidate
    leads the second by that many z) and `gap` (only those within `gap` z of the best). Pure, so evals
    replay it offline."""
    head, tail = fused[: cfg.candidates], fused[cfg.candidates:]
    if not (cfg.skip_margin or cfg.gap):
        return head, tail
    z = fusion.zscores([c.score for c in head])
    ranked = sorted(z, reverse=True)
    if cfg.skip_margin and len(ranked) > 1 and ranked[0] - ranked[1] >= cfg.skip_margin:
        return None
    if cfg.gap:
        near = [zc >= ranked[0] - cfg.gap for zc in z]
        return ([c for c, n in zip(head, near, strict=True) if n],
                [c for c, n in zip(head, near, strict=True) if not n] + tail)
    return head, tail


def reorder(head: list[Candidate], tail: list[Candidate], scores: list[float]) -> list[Candidate]:
    """The head in its blended order; candidates the reranker did not see stay below it, in their
    order, without stretching the range that the recency prior scales to."""
    for c, b in zip(head, scores, strict=True):
        c.score = b
    head.sort(key=lambda c: -c.score)
    floor = min((c.score for c in head), default=0.0)
    for i, c in enumerate(tail, start=1):
        c.score = floor - 1e-3 * i
    return head + tail


def blend(before: list[float], scores: list[float], cfg: SearchSettings,
          features: dict[str, list[float]]) -> list[float]:
    """The rerank's order over the head: in logit space, z-scored (sigmoid scores saturate, 0.0001 vs
    0.0005, and the recency prior that follows would then reorder every weak candidate by date
    alone), plus `blend` of the z-scored retrieval score and each feature's own blend of its z-score
    (features.py says why header and date are read again). Pure, so evals replay it offline."""
    total = [r + cfg.rerank.blend * f for r, f in zip(fusion.zscores([_logit(s) for s in scores]),
                                                        fusion.zscores(before), strict=True)]
    for feat in registry.features():
        if (weight := feat.blend(cfg)) and feat.name in features:
            total = [t + weight * z for t, z in zip(total, fusion.zscores(features[feat.name]), strict=True)]
    return total


def _logit(p: float) -> float:
    """Back from a 0..1 rerank score to the model's logit, where z-scores are meaningful."""
    p = min(max(p, 1e-7), 1 - 1e-7)
    return math.log(p / (1 - p))


def rerank_text(d: docmod.Doc, chars: int, terms: Sequence[str] = (), window: int = 0) -> str:
    """What the cross-encoder reads: breadcrumb and title, the fact, then its neighbouring context,
    marked as such, in what is left of `chars`. On LoCoMo dev, reading the context after the fact
    lifted hit@10 over the fact alone (evals/results/locomo.md): a reply is
    judged with the line it answers. A fact longer than `window` is read from its paragraph that names
    most of the query's `terms` (passage.py): the model reads ~900 characters, and on documentation
    the answer is usually further in (evals/results/corpora.md)."""
    return read_from(d, passage.best_start(d.fact or d.body, list(terms), window) if window else 0, chars)


def read_from(d: docmod.Doc, at: int, chars: int) -> str:
    """What the cross-encoder reads when the fact is read from offset `at` (a paragraph start; 0: the
    top, where the neighbouring context may follow); `rerank_text` chooses `at`."""
    lead = " > ".join(x for x in (d.breadcrumb, d.title) if x)
    fact = d.fact or d.body
    body = passage.read_at(fact, at)
    if lead and body.startswith(d.title):
        lead = d.breadcrumb      # a header line that is the title is not said twice
    elif body is not fact:
        lead = d.breadcrumb or d.title   # read from further in: the breadcrumb ends in the section's heading
    text = f"{lead}\n{body}" if lead else body
    # Read from a later paragraph, the fact stands alone: the lead already says where it sits.
    if d.context and body is fact and len(text) < chars:
        text += "\n(context: " + " ".join(d.context.split()) + ")"
    return text[:chars]
