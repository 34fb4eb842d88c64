"""Fusion's evidence: the candidate lists as one union (RRF, ranking.fuse), then every candidate of the
union scored on the same features (features.py) for linear fusion (ranking.linear). Linear fusion needs
both lists; RRF order stays when the embedding sidecar is down."""

from __future__ import annotations

from muninn.core import registry
from muninn.plugins.search import dense, ranking, windows
from muninn.plugins.search.state import SearchState


class Fusion:
    name = "fusion"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return True

    def run(self, state: SearchState) -> None:
        state.fused = ranking.fuse(state.lists, state.ranking)


class Linear:
    name = "linear"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return state.ranking.fusion == "linear" and {"vector", "keyword"} <= state.lists.keys() and bool(state.fused)

    def run(self, state: SearchState) -> None:
        assert state.sought is not None
        uris = [c.uri for c in state.fused]
        docs = state.docs
        chars = state.ranking.embedded_window_chars if state.ranking.window_weight else 0
        wins = [windows.texts(docs[u].text, chars) if chars else [] for u in uris]
        asked = state.query_vectors     # the question's vectors, asked beside find (query_vectors.py)
        try:
            if "dense" in asked:
                asked["dense"].result()     # cached once it is done; its failure is raised here
            # One sidecar call for every text of every candidate (only the uncached ones are sent).
            cos = state.searcher.dense.cosines(state.sought.query, [docs[u].text for u in uris]
                                               + [docs[u].fact or docs[u].body for u in uris]
                                               + [w for ws in wins for w in ws])
        except dense.DenseUnavailable as exc:
            state.warn(f"linear fusion skipped, results are in RRF order: {exc}")
            return
        n = len(uris)
        # update: the section passages' cosines (stages/sections.py) were gathered before this stage
        state.cosines.update({"file": dict(zip(uris, cos[:n], strict=True)),
                              "fact": dict(zip(uris, cos[n:2 * n], strict=True))})
        if chars:
            at, best = 2 * n, {}
            for u, ws in zip(uris, wins, strict=True):
                best[u] = max(cos[at:at + len(ws)])
                at += len(ws)
            state.cosines["window"] = best
        if (second := state.searcher.second) is not None:
            try:
                if "second" in asked:
                    asked["second"].result()
                state.cosines["second"] = dict(zip(uris, second.cosines(state.sought.query,
                                                                        [docs[u].text for u in uris]), strict=True))
            except dense.DenseUnavailable as exc:   # the first model's fusion stands without it
                state.warn(f"the second model's cosine is left out of the fusion: {exc}")
        used = [f for f in registry.features() if f.applies(state)]
        state.features = {f.name: f.score(state, uris) for f in used}
        for c in state.fused:
            for f in used:
                if f.shown:
                    c.stage_scores[f.shown] = round(state.features[f.name].get(c.uri, 0.0), 4)
        weights, _ = ranking.feature_weights(used, state.ranking)
        state.fused = ranking.linear(state.fused, state.features, weights)
