"""How a search result is printed: plain text, markdown, or URIs alone (`--json` is `to_dict`).

A URI is never cut: it sits on its own line, whole, so it can be copied into `muninn read`. Nothing
here draws boxes or wraps lines; a terminal wraps long lines itself, a pipe gets them whole.
"""

from __future__ import annotations

from collections.abc import Mapping

from muninn.plugins.search.doc import SNIPPET_CHARS
from muninn.plugins.search.types import Hit, SearchResult

# A snippet keeps a code line on its own line; printed, a hit keeps its one snippet line, so they are marked.
LINE_BREAK = " ⏎ "
# The pipeline's snippets are bounded where they are cut; a hit built elsewhere is bounded here too.
LIMIT = SNIPPET_CHARS + 60

# {uri: the untrusted readers who may write there}: what an agent wrote is marked in every output.
Marks = Mapping[str, list[str]]


def mark(uri: str, marks: Marks) -> str:
    """The mark before a hit an untrusted reader may have written: its text is data, not instructions."""
    return f"[untrusted: written by agent {', '.join(marks[uri])}] " if marks.get(uri) else ""


def how(result: SearchResult) -> str:
    """The route, the reranker and the days the query named, in one parenthesis."""
    said = result.route + (f", reranked by {result.reranker}" if result.reranker else "")
    if result.dates:
        lo, hi = result.dates["from"], result.dates["to"]
        said += f", dated {lo if lo == hi else f'{lo} to {hi}'} ±{result.dates['slack_days']}d"
        if result.dates["searched"] != result.query:
            said += f", searched as {result.dates['searched']!r}"
    return said


def _facts(h: Hit) -> str:
    parts = [(h.date or "")[:10], f"relevance {h.relevance:.2f}" if h.relevance is not None else "",
             f"score {h.score:.3f}"]
    return " · ".join(p for p in parts if p)


def shown(h: Hit) -> str:
    """The snippet on one line, its lines marked apart (doc.snippet keeps a command on a line of its own)."""
    flat = LINE_BREAK.join(" ".join(line.split()) for line in h.snippet.splitlines() if line.strip())
    return flat if len(flat) <= LIMIT else flat[:LIMIT].rsplit(" ", 1)[0] + " …"


def text(result: SearchResult, marks: Marks | None = None) -> str:
    """Each hit: a numbered title line with date, relevance and score; the URI whole; a snippet."""
    marks = marks or {}
    if not result.hits:
        return f"nothing found for {result.query!r}\n"
    lines = [f"{' '.join(result.query.split())[:200]}  ({how(result)})", ""]
    for i, h in enumerate(result.hits, start=1):
        lines += [f"{i}. {mark(h.uri, marks)}{h.title or '(untitled)'}  [{_facts(h)}]", f"   {h.uri}"]
        if snip := shown(h):
            lines.append(f"   {snip}")
        lines.append("")
    return "\n".join(lines)


def markdown(result: SearchResult, marks: Marks | None = None) -> str:
    """A markdown list, for a note or an issue: title linked to its URI, facts, quoted snippet."""
    marks = marks or {}
    if not result.hits:
        return f"_nothing found for {result.query!r}_\n"
    lines = [f"**{' '.join(result.query.split())[:200]}** ({how(result)})", ""]
    for i, h in enumerate(result.hits, start=1):
        title = (h.title or "(untitled)").replace("]", "\\]")
        lines.append(f"{i}. {mark(h.uri, marks)}[{title}](<{h.uri}>) · {_facts(h)}")
        if snip := shown(h):
            lines.append(f"   > {snip}")
    return "\n".join(lines) + "\n"


def files(result: SearchResult, marks: Marks | None = None) -> str:
    """One URI a line, best first (`muninn search x --files | xargs -n1 muninn read`)."""
    return "".join(f"{h.uri}\n" for h in result.hits)
