"""The cross-encoder reads the query whole against each of the first `rerank.candidates` fused
candidates (ranking.rerank_head); ranking.after_rerank turns its scores into order."""

from __future__ import annotations

from collections.abc import Sequence

from muninn.core import registry
from muninn.plugins.search import doc as docmod
from muninn.plugins.search import passage, ranking
from muninn.plugins.search import rerank as rerank_mod
from muninn.plugins.search.request import Switch
from muninn.plugins.search.state import SearchState
from muninn.plugins.search.types import check_scores


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
        split = ranking.rerank_head(state.fused, state.ranking, cfg.candidates)
        if split is None:
            return
        head, tail = split
        terms = state.analysis.terms if state.analysis else []
        r = state.ranking
        texts = [_passage_text(state, c.uri) or rerank_text(state.docs[c.uri], r.content_chars, terms, r.passage_window)
                 for c in head]
        try:
            scores = check_scores(model.name, model.rerank(state.request.text, texts), len(texts))
        except rerank_mod.RerankUnavailable as exc:
            state.warn(f"rerank skipped, results are in fusion order: {exc}")
            return
        for c, s in zip(head, scores, strict=True):
            c.stage_scores["rerank"] = round(s, 5)
        state.reranked_by = getattr(model, "model", None) or model.name
        weights, blends = ranking.feature_weights(registry.features(), r)
        state.fused = ranking.after_rerank(state.fused, head, tail, scores, state.features, weights, blends, r)


def _passage_text(state: SearchState, uri: str) -> str | None:
    """Unit section: the cross-encoder reads the section's best passage under its breadcrumb."""
    key = state.sections.get(uri)
    got = state.passages.get(key) if key else None
    return got[1][:state.ranking.content_chars] if got and got[0] == uri else None


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
