"""A long fact read as several windows, each embedded on its own: the embedder reads the first 256 tokens
(~1,000 characters) of a text, and on documentation the answer usually sits further into its section
(evals/results/corpora.md). Each window is a run of the fact's paragraphs under its breadcrumb, as a reader
sees a paragraph under its heading; linear fusion's `window` feature is a candidate's best window cosine.
"""

from __future__ import annotations

import re

from muninn.core import factfile

_PARAGRAPH = re.compile(r"\n\s*\n")
# The exporter cuts a section too long for one fact into `<section>/part-N.md` (export/markdown.py,
# the part number is the last anchor); every part of one section shares the section's key.
_PART = re.compile(r"/part-\d+\.md$")


def section_key(uri: str) -> str:
    """The section a fact file belongs to: `.../heading/part-2.md` -> `.../heading.md`; any other uri is
    its own section."""
    return _PART.sub(".md", uri)


def part_range(key: str) -> tuple[str, str]:
    """The uris of a section's parts as a range [lo, hi): `.../heading/part-` up to `.../heading/part.`."""
    base = key.removesuffix(".md") + "/part"
    return base + "-", base + "."


def is_part_of(uri: str, key: str) -> bool:
    return uri != key and section_key(uri) == key


def windows(body: str, chars: int) -> list[str]:
    """The fact's paragraphs packed greedily into windows of at most `chars` characters; a paragraph
    longer than that is cut at sentence ends, then hard. chars <= 0: the whole body, one window."""
    if chars <= 0 or len(body) <= chars:
        return [body]
    pieces: list[str] = []
    for para in (p.strip() for p in _PARAGRAPH.split(body)):
        while len(para) > chars:
            cut = max(para.rfind(". ", 0, chars), para.rfind("\n", 0, chars))
            cut = cut + 1 if cut > chars // 3 else chars
            pieces.append(para[:cut].strip())
            para = para[cut:].strip()
        if para:
            pieces.append(para)
    out: list[str] = []
    for p in pieces:
        if out and len(out[-1]) + 2 + len(p) <= chars:
            out[-1] += "\n\n" + p
        else:
            out.append(p)
    return out


def texts(file_text: str, chars: int) -> list[str]:
    """What is embedded for a fact file's windows: the breadcrumb (or title), a blank line, the window.
    chars 0: the fact alone, without breadcrumb (linear fusion's `fact` text)."""
    ff = factfile.parse(file_text)
    head = factfile.CRUMB.join(ff.breadcrumb) or ff.title
    fact = factfile.split_context(ff.body)[0]
    if chars == 0:
        return [fact]
    return [f"{head}\n\n{w}" for w in windows(fact, chars)]
