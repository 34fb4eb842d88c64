"""Many questions through one Searcher at once (`muninn search --batch`, `muninn bench`).

A question spends most of its time in the cross-encoder (onnxruntime and torch release the GIL)
and in I/O (vectors, the embedding sidecar, reads), so a few threads over the questions use every
core. Each question is still one pipeline run on its own state: the ranks are those of one at a
time. Answers come back in the questions' order, at most a few ahead of the one being written.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

Q = TypeVar("Q")
R = TypeVar("R")


def workers(setting: int | None) -> int:
    """search.batch_workers, or one per core and one more: each question reranks on one core
    (Searcher.at_once), and the extra one's reads and fusion fill the gaps
    (evals/results/decisions.md#batch-threads)."""
    return setting or (os.cpu_count() or 1) + 1


def in_order(answer: Callable[[Q], R], questions: Iterable[Q], n: int) -> Iterator[R]:
    """`answer(q)` for each question, `n` at a time, yielded in the questions' order. A question that
    fails raises where it stands in that order; the questions after it are not answered."""
    if n <= 1:
        yield from map(answer, questions)
        return
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="muninn-batch") as pool:
        pending: deque[Future[R]] = deque()
        try:
            for q in questions:
                pending.append(pool.submit(answer, q))
                if len(pending) >= 2 * n:       # enough queued to keep every worker busy
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for f in pending:
                f.cancel()
