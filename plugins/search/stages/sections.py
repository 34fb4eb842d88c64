"""Unit section (ranking.unit): a hit is a section, found by its best passage (issue 48).

The exporter cuts a long section into parts (`<section>/part-N.md`); as facts they came back as separate
hits, competing for the page and the per-file cap, and the right section was missed when the wrong part
ranked. Here every candidate's section is read whole, from the reader's own keyword index (its other
parts, those this reader holds), and cut into passages of ~120 words under the breadcrumb
(windows.texts); each section's best passage cosine becomes the `passage` feature of all its parts, and
the passage is what the reader's snippet shows and what the cross-encoder reads.

Where passages live (a decision with security weight): in the reader's local vector cache, keyed by the
hash of the passage text, derived from the reader's keyword index only. The cache keeps exactly the
texts fact_vectors.texts derives from the index (reader_index.keep_vectors), so a file that `policy
apply`, the nested-area purge, `leak purge` or `forget` takes out of the index takes its passages' vectors
out of the cache. No passage is written to OpenViking: no reader lists them, and sync's gate never sees them.
"""

from __future__ import annotations

from muninn.plugins.search import dense, ranking, windows
from muninn.plugins.search.state import SearchState


class Passages:
    """Evidence: each candidate section's parts and best passage (before linear fusion reads it)."""

    name = "passages"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return state.ranking.unit == "section" and bool(state.fused) and state.sought is not None

    def run(self, state: SearchState) -> None:
        assert state.sought is not None
        index, readable = state.searcher.index, state.searcher.readable
        keys = {c.uri: windows.section_key(c.uri) for c in state.fused}
        members: dict[str, list[str]] = {}
        for c in state.fused:
            members.setdefault(keys[c.uri], []).append(c.uri)
        for key, uris in members.items():
            # The other parts: only from this reader's index, and only what its policy lets it read.
            more = [u for u in (index.parts(key) if index is not None else []) if u not in uris]
            members[key] = uris + [u for u in more if readable is None or readable(u)]
        extra = [u for ms in members.values() for u in ms if u not in state.docs]
        if extra:
            state.docs.update(state.searcher.fetcher.fetch(extra, server=False))
        chars = state.ranking.passage_chars
        texts: list[tuple[str, str, str]] = []     # (section, part uri, passage text)
        for key, uris in members.items():
            for u in uris:
                if (d := state.docs.get(u)) is not None:
                    texts += [(key, u, t) for t in windows.texts(d.text, chars)]
        state.sections = {u: key for key, uris in members.items() for u in uris}
        try:
            cos = state.searcher.dense.cosines(state.sought.query, [t for _, _, t in texts])
        except dense.DenseUnavailable as exc:
            state.warn(f"sections are in fusion order, not found by their best passage: {exc}")
            return
        best = ranking.best_passages([(k, u, t, c) for (k, u, t), c in zip(texts, cos, strict=True)])
        state.passages = best
        state.cosines["passage"] = {c.uri: best[keys[c.uri]][2] for c in state.fused if keys[c.uri] in best}


class OnePerSection:
    """One place per section: its best-ranked candidate, shown as the part that holds its best passage."""

    name = "sections"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return state.ranking.unit == "section" and bool(state.fused)

    def run(self, state: SearchState) -> None:
        keys = {c.uri: state.sections.get(c.uri) or windows.section_key(c.uri) for c in state.fused}
        state.fused, moved = ranking.one_per_section(state.fused, keys, state.passages)
        # A hit moved to its best passage's part keeps the evidence it was ranked on (rerank blends it).
        for new, old in moved.items():
            for values in state.features.values():
                if old in values:
                    values[new] = values[old]
