"""A team memory over HTTP in agent-hq's shape: GET {url}/api/memory?q=TERM&limit=N answering a JSON
list of {id, title, content, namespace, importance, updated_at?}.

Its search is one LIKE, so each word is asked apart, all at once, with a short timeout (seed 001); a
memory that refuses the connection is skipped at once, one that does not answer within `timeout`
after it. The key, if the memory takes one, is in the keyring (`outside:<name>`, workspace scope), sent
as a bearer token; never in muninn.yaml, never in the environment.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from muninn.plugins.search.outside.sqlite_memory import Row, Unavailable

MAX_TERMS = 6


@dataclass(frozen=True)
class Entry:
    id: str
    title: str
    content: str
    namespace: str
    importance: float
    date: str | None


def terms_of(query: str) -> list[str]:
    words = list(dict.fromkeys(w.lower() for w in re.findall(r"\w{2,}", query)))[:MAX_TERMS]
    return words or [query.strip()]


def _get(url: str, key: str | None, timeout: float) -> list[dict]:
    headers = {"Accept": "application/json", "User-Agent": "muninn-outside"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    req = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(req, timeout=timeout) as resp:    # the owner declared this URL
        data = json.loads(resp.read(4_000_000))
    if not isinstance(data, list):
        raise ValueError("the answer is not a JSON list")
    return [d for d in data if isinstance(d, dict)]


def _reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"answered HTTP {exc.code}" + (" (its key is missing or wrong)" if exc.code in (401, 403) else "")
    if isinstance(exc, TimeoutError) or "timed out" in str(exc):
        return "did not answer in time"
    if isinstance(exc, urllib.error.URLError):
        return f"unreachable ({exc.reason})"
    return f"unusable answer ({exc})"


def ask(base: str, terms: list[str], limit: int, key: str | None, timeout: float) -> list[list[dict]]:
    """Each term's answer, asked in parallel; Unavailable when none answered."""
    urls = [f"{base.rstrip('/')}/api/memory?" + urllib.parse.urlencode({"q": t, "limit": limit}) for t in terms]
    answers: list[list[dict] | None] = []
    problems: list[str] = []
    with ThreadPoolExecutor(max_workers=len(urls)) as pool:
        futures = [pool.submit(_get, u, key, timeout) for u in urls]
        for f in futures:
            try:
                answers.append(f.result())
            except Exception as exc:  # every failure of a remote is one line
                answers.append(None)
                problems.append(_reason(exc))
    if all(a is None for a in answers):
        raise Unavailable(f"{base} {problems[0] if problems else 'gave nothing'}")
    return [a or [] for a in answers]


def search(base: str, query: str, limit: int, key: str | None, timeout: float) -> list[Row]:
    """Entries any term found, ranked by how many terms found them, then importance, then newest."""
    terms = terms_of(query)
    found: dict[str, tuple[int, dict]] = {}
    for rows in ask(base, terms, limit, key, timeout):
        for m in rows:
            mid = str(m.get("id", ""))
            if not mid:
                continue
            hits, first = found.get(mid, (0, m))
            found[mid] = (hits + 1, first)

    def rank(item: tuple[int, dict]) -> tuple:
        n, m = item
        return (-n, -_num(m.get("importance")), _neg_date(m))

    out = []
    for n, m in sorted(found.values(), key=rank)[:limit]:
        out.append(Row(title=str(m.get("title") or ""), ref=str(m.get("id")), meta=str(m.get("namespace") or "default"),
                       text=str(m.get("content") or ""), score=-float(n * 10 + _num(m.get("importance"))),
                       date=_date(m)))
    return out


def read(base: str, ref: str, key: str | None, timeout: float) -> str | None:
    """One entry's whole content, as seed 001's expand: the memory has no get-by-id, so its list is read."""
    for m in ask(base, [""], 200, key, timeout)[0]:
        if str(m.get("id")) == ref:
            return str(m.get("content") or "")
    return None


def count(base: str, key: str | None, timeout: float) -> int:
    """How many entries it lists (its list is capped at 200 by agent-hq: at least this many)."""
    return len(ask(base, [""], 200, key, timeout)[0])


def _num(v: object) -> float:
    try:
        return float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 3.0


def _date(m: dict) -> str | None:
    d = m.get("updated_at") or m.get("created_at")
    return str(d) if d else None


def _neg_date(m: dict) -> str:
    # Newest first among equals: ISO strings compare as dates; inverted by character for an ascending sort.
    d = _date(m) or ""
    return "".join(chr(0x10FFFF - ord(c)) for c in d) if d else "\U0010ffff"
