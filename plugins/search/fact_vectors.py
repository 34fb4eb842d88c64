"""Every reader's search vectors, computed before its searches need them.

Linear fusion scores each candidate on its cosine to the query, for the whole file and for the fact
alone (stages/linear.py). A candidate seen for the first time costs two embeddings, so on a corpus
that searches have not yet crossed, a question without rerank spent most of its time embedding.
In `muninn bench` a new question took 901 ms p50 without rerank, and 80 ms once the vectors were filled
(evals/results/benchmarks.md).
The nightly refresh fills each reader's vector cache from its keyword index, and only new texts
are embedded.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from muninn.core.config import EmbedSettings, Settings
from muninn.plugins.search import dense, keyword, windows
from muninn.plugins.search import doc as docmod


@dataclass
class Filled:
    texts: int = 0
    by_index: dict[str, int] = field(default_factory=dict)    # index path: texts embedded for it

    @property
    def indexes(self) -> int:
        return len(self.by_index)

    @property
    def embedded(self) -> int:
        return sum(self.by_index.values())


def texts(index: keyword.KeywordIndex, window_chars: int = 0) -> list[str]:
    """The texts linear fusion embeds for each indexed file, read as the content stage reads them: the
    file, the fact, and its windows when the `window` feature is on (window_chars > 0)."""
    out: list[str] = []
    for uri, text in index.documents():
        d = docmod.parse(uri, text)
        out += [d.text, d.fact or d.body, *(windows.texts(d.text, window_chars) if window_chars else [])]
    return out


def second_texts(index: keyword.KeywordIndex) -> list[str]:
    """The texts the `second` feature embeds under embed.second_model: each indexed file."""
    return [docmod.parse(uri, text).text for uri, text in index.documents()]


def window_chars(settings: Settings) -> int:
    """The window size windows are embedded at: a section's passages (ranking.unit section), the `window`
    feature's, 0 when neither is on. The vector cache keeps exactly these (reader_index.keep_vectors), so
    passages follow the keyword index out of it on every purge."""
    return settings.ranking.embedded_window_chars


def fill(settings: Settings, index_paths: Iterable[Path]) -> Filled:
    """Fill the vector cache of every index that exists. A text another reader's cache already holds
    (one of these, or the configured identity's) is copied from it, so it is embedded once.
    Raises dense.DenseUnavailable when the embedding sidecar does not answer."""
    done = Filled()
    if settings.ranking.fusion != "linear":
        return done
    targets = [p for p in dict.fromkeys(index_paths) if p.exists()]
    second = settings.second_embed
    models = [(settings.embed, False), *([(second, True)] if second is not None else [])]
    for embed, is_second in models:
        _fill_model(settings, embed, is_second, targets, done)
    return done


def _fill_model(settings: Settings, embed: EmbedSettings, second: bool, targets: list[Path], done: Filled) -> None:
    """One model's vectors for every target index; a neighbour's cache of the same model donates."""
    neighbours = [p for p in dict.fromkeys([*targets, settings.paths.search_index()])
                  if dense.cache_path(p, second).exists() or p in targets]
    timeout = max(settings.search.timeout, 60.0)
    scorers = {p: dense.DenseScorer(embed, dense.cache_path(p, second), timeout=timeout, strict=second)
               for p in neighbours}
    try:
        for path in targets:
            index = keyword.KeywordIndex(path)
            try:
                batch = second_texts(index) if second else texts(index, window_chars(settings))
            finally:
                index.close()
            donors = [scorer for other, scorer in scorers.items() if other != path]
            done.by_index[str(path)] = done.by_index.get(str(path), 0) + scorers[path].fill(batch, donors)
            done.texts += len(batch)
    finally:
        for scorer in scorers.values():
            scorer.close()
