"""The content of every fused candidate: the start of the file, which is what the features and the
reranker read and where title, breadcrumb, date and snippet come from. A candidate whose file is
gone or not readable with this key is dropped.

Texts come from the keyword index when it holds the file (sync keeps it current by content hash),
otherwise from the server, read concurrently with the reader's own key. Parsed documents are kept
per content hash for the life of the process, so a batch or the MCP server reads each file once.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from muninn.core.errors import AuthError, NotFound
from muninn.plugins.search import doc as docmod
from muninn.plugins.search.doc import Doc
from muninn.plugins.search.keyword import KeywordIndex
from muninn.plugins.search.state import SearchState

if TYPE_CHECKING:
    from muninn.core.client import OpenViking


class ContentFetcher:
    name = "content"

    def __init__(self, client: OpenViking | None, index: KeywordIndex | None = None, workers: int = 8) -> None:
        self.client = client
        self.index = index
        self.workers = workers
        # By URI, not by content: two files with the same bytes are two docs (each its own URI, area and
        # fact id), whichever a batch's threads happened to read first.
        self._docs: dict[str, Doc] = {}
        self.server_reads = 0

    def _read(self, uri: str, server: bool = True) -> Doc | None:
        text = self.index.text(uri) if self.index else None
        if text is None and self.client is not None and server:
            try:
                text = self.client.read(uri)
                self.server_reads += 1
            except (NotFound, AuthError):
                return None  # gone, or not readable by this key: never show it
        return docmod.parse(uri, text) if text is not None else None

    def fetch(self, uris: list[str], server: bool = True) -> dict[str, Doc]:
        """Docs by URI; URIs that cannot be read are left out (`server`: False reads the index only)."""
        out: dict[str, Doc] = {}
        missing = []
        for uri in uris:
            if (known := self._docs.get(uri)) is not None:
                out[uri] = known
            else:
                missing.append(uri)
        if missing:
            with ThreadPoolExecutor(max_workers=min(self.workers, len(missing))) as pool:
                for uri, d in zip(missing, pool.map(lambda u: self._read(u, server), missing), strict=True):
                    if d is None:
                        continue
                    out[uri] = self._docs.setdefault(uri, d)
        return out


class Content:
    name = "content"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return True

    def run(self, state: SearchState) -> None:
        # Offline, only the keyword index's texts: a file it lacks is left out, not a second timeout.
        state.docs = state.searcher.fetcher.fetch([c.uri for c in state.fused], server=not state.offline)
        state.fused = [c for c in state.fused if c.uri in state.docs]


class Since:
    """`--since`: only facts dated at or after the given moment; an undated fact is left out."""

    name = "since"
    switch = None

    def applies(self, state: SearchState) -> bool:
        return state.request.since_at is not None

    def run(self, state: SearchState) -> None:
        since_at = state.request.since_at
        assert since_at is not None
        state.fused = [c for c in state.fused if (d := state.docs[c.uri].date) is not None and d >= since_at]
