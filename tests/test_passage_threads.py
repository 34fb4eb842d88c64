"""search --batch reads passages from several threads at once: stemming must not share state."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import snowballstemmer

from muninn.plugins.search import passage

WORDS = [f"{stem}{suffix}{i}" for i in range(400) for stem in ("backup", "rotat", "certificat", "replicat")
         for suffix in ("ing", "ions", "ed", "s", "ies")]


def test_stems_from_many_threads_are_the_stems_of_one() -> None:
    one = snowballstemmer.stemmer("english")
    want = [one.stemWord(w) for w in WORDS]
    raw = passage._stem.__wrapped__       # past the cache: every call stems
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(raw, WORDS * 3, chunksize=1))
    assert got == want * 3
