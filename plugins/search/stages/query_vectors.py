"""The question's vectors, asked of the embedding sidecar beside OpenViking's `find`, not after it.

Linear fusion needs the question under embed.model and under the second model. Asked in the linear stage,
they came after `find` and the content fetch, one after the other, and were most of a warm search's time
the first time a question was seen (evals/results/benchmarks.md, stage linear). Here they are asked on a
thread while the vector and keyword stages run; the linear stage waits for each (`state.query_vectors`)
and finds them cached. A model that failed fails there as it would have, once: never a second timeout.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future

from muninn.plugins.search.state import SearchState


class QueryVectors:
    name = "query_vectors"
    switch = None

    def applies(self, state: SearchState) -> bool:
        # Linear fusion runs only beside BM25 (route hybrid); an identifier or a vectors-only query never fuses.
        return state.ranking.fusion == "linear" and state.route == "hybrid" and state.sought is not None

    def run(self, state: SearchState) -> None:
        assert state.sought is not None
        scorers = {"dense": state.searcher.dense, "second": state.searcher.second}
        asked = {name: Future() for name, s in scorers.items() if s is not None}
        query = state.sought.query

        def ask() -> None:
            failed: BaseException | None = None
            for name, future in asked.items():
                if failed is not None:      # the same sidecar serves both: never a second wait on it
                    future.set_exception(failed)
                    continue
                try:
                    future.set_result(scorers[name].query_vector(query))
                except BaseException as exc:    # raised again where the linear stage waits for it
                    failed = exc
                    future.set_exception(exc)

        state.query_vectors = asked
        threading.Thread(target=ask, name="muninn-query-vectors", daemon=True).start()
