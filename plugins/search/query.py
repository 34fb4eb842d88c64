"""Query analysis: is this an identifier (route keyword-only) or a question (hybrid)?

Ops notes are half exact identifiers. A ticket key, a hostname or a UUID has one right answer
and no semantic neighbourhood, so vectors only add noise there: such queries skip that path.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from muninn.plugins.search import query_dates

# Each pattern must match the whole token; a query is an identifier query when every token is
# an identifier or a stop word ("INC-10963", "what is db01.prod.example.com").
IDENTIFIERS: dict[str, re.Pattern[str]] = {
    "ticket": re.compile(r"[A-Za-z][A-Za-z0-9]{1,9}-\d{1,7}"),
    "uuid": re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"),
    "ipv4": re.compile(r"(?:\d{1,3}\.){3}\d{1,3}(?:/\d{1,2})?(?::\d+)?"),
    "ipv6": re.compile(r"(?=[0-9a-fA-F:]*::?)[0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4}){2,7}"),
    "fqdn": re.compile(r"(?=.*[A-Za-z])[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?"
                       r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)+\.?(?::\d+)?"),
    "path": re.compile(r"~?/?(?:[\w.-]+/)+[\w.-]*|[\w-]+\.(?:ya?ml|json|md|py|sh|conf|toml|ini|tf|txt|log)"),
    # k8s objects: kind/name or a pod name with its replicaset/pod hash suffix
    "k8s": re.compile(r"(?:deploy|deployment|pod|svc|service|sts|statefulset|ds|daemonset|cm|configmap|"
                      r"secret|ns|namespace|ingress|job|cronjob)/[a-z0-9][a-z0-9.-]*|"
                      r"[a-z0-9]+(?:-[a-z0-9]+)*-[a-f0-9]{8,10}-[a-z0-9]{5}"),
    # long hex ids (commit shas, account ids) and host-like names with digits (db01, web-3)
    "hexid": re.compile(r"[0-9a-f]{12,40}|\d{10,14}"),
    "hostname": re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*-?\d+[a-z0-9]*"),
}

STOP = frozenset(
    "a an and any are as at be been but by can could did do does for from had has have how i if in "
    "into is it its me my of on or our over s she so than that the their them then there these they "
    "this to too up us was we were what when where which while who whom whose why will with would "
    "you your he him his her hers about after before did does ever just also like get got".split()
)
# Words that only ask to look something up: "what happened in INC-10963" is still a lookup of a key.
LOOKUP = frozenset("happened happen show find tell details detail info status look lookup notes note "
                   "ticket incident host server ip address".split())

_TOKEN = re.compile(r"[^\s,;\"'()\[\]{}<>?!]+")
_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> set[str]:
    """The lower-cased words of `text`, split as query terms are (so the two can be compared)."""
    return {w.lower() for w in _WORD.findall(text)}


@dataclass(frozen=True)
class Analysis:
    query: str
    identifiers: list[tuple[str, str]]   # (kind, token)
    terms: list[str]                     # content words for BM25
    window: query_dates.Window | None = None   # the days the query names ("on 3 June, 2023")

    @property
    def terms_outside_identifiers(self) -> list[str]:
        inside = {w for _, tok in self.identifiers for w in words(tok)}
        return [t for t in self.terms if t not in inside]

    @property
    def is_identifier(self) -> bool:
        return bool(self.identifiers) and all(t in LOOKUP for t in self.terms_outside_identifiers)

    def without_dates(self) -> Analysis:
        """The query with the days it names taken out, for the searches that match words: once the
        days are the window, "March 2023" as words would rank every file whose title says March over
        the one, written in April, that says "last month". Unchanged when nothing else is left."""
        rest = query_dates.without(self.query, keep=tuple(tok for _, tok in self.identifiers))
        ids, terms = _read(rest)
        if self.window is None or not terms:
            return self
        return Analysis(query=rest, identifiers=ids, terms=terms, window=self.window)


def identifier_kind(token: str) -> str | None:
    token = token.strip(".:")
    for kind, pattern in IDENTIFIERS.items():
        if pattern.fullmatch(token):
            return kind
    return None


def _read(query: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The identifiers and the content words of `query`."""
    ids = []
    for raw in _TOKEN.findall(query):
        kind = identifier_kind(raw)
        if kind:
            ids.append((kind, raw.strip(".:")))
    return ids, [w.lower() for w in _WORD.findall(query) if w.lower() not in STOP]


def analyse(query: str, today: dt.date | None = None) -> Analysis:
    """`today` places a day or month named without a year ("in June"): see query_dates.window."""
    ids, terms = _read(query)
    return Analysis(query=query, identifiers=ids, terms=terms, window=query_dates.window(query, today))


def fts_query(analysis: Analysis) -> str:
    """An FTS5 MATCH expression: identifiers as exact phrases, other words OR-ed.

    unicode61 splits `INC-10963` into `inc` `10963`; a phrase keeps them adjacent, so the key
    matches itself and not every file that says "inc" somewhere.
    """
    parts = []
    for _, tok in analysis.identifiers:
        words = _WORD.findall(tok)
        if words:
            parts.append('"' + " ".join(words) + '"')
    # An identifier lookup matches on its identifiers alone: "happened" would only add noise.
    for term in [] if analysis.is_identifier else analysis.terms_outside_identifiers:
        parts.append('"' + term.replace('"', "") + '"')
    return " OR ".join(dict.fromkeys(parts))
