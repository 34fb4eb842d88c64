"""Split a markdown document into heading sections, each with its breadcrumb.

Chunks follow headings, not token windows: a runbook section is the unit someone wants back.
The rules, in order:
- a section that fits in `max_chars` (with everything under it) is one chunk;
- a bigger one keeps its own text and splits at its sub-headings, recursively;
- a sub-section shorter than `min_chars` stays inside its parent instead of becoming a
  one-line fact that has too little text to embed well;
- a chunk that is still too big (one long section without sub-headings) splits at paragraph
  breaks, never inside a code fence.
`max_chars` defaults to ~1,200 because the embedding sidecar reads 256 tokens (embed.max_tokens)
and silently ignores the rest.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")


def is_heading(line: str) -> bool:
    return bool(_HEADING.match(line))
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass
class Node:
    level: int
    title: str
    own: list[str] = field(default_factory=list)  # lines, heading line first
    children: list[Node] = field(default_factory=list)

    def own_text(self) -> str:
        return "\n".join(self.own).strip()

    def full_text(self) -> str:
        parts = [self.own_text(), *(c.full_text() for c in self.children)]
        return "\n\n".join(p for p in parts if p)


@dataclass(frozen=True)
class Chunk:
    breadcrumb: tuple[str, ...]
    text: str
    anchor: str  # stable within the document: the breadcrumb below the title, plus a part number


def parse(text: str, title: str) -> Node:
    """A tree of sections under a root whose title is the document title.

    A single H1 at the top becomes the root (its title is the document's name); text before
    the first heading belongs to the root.
    """
    root = Node(level=0, title=title)
    stack = [root]
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(line)
        if not match:
            stack[-1].own.append(line)
            continue
        level, heading = len(match.group(1)), match.group(2).strip()
        node = Node(level=level, title=heading, own=[line])
        while stack[-1].level >= level:
            stack.pop()
        stack[-1].children.append(node)
        stack.append(node)
    h1s = [c for c in root.children if c.level == 1]
    if len(h1s) == 1 and root.children[0] is h1s[0] and len(root.children) == 1:
        h1 = h1s[0]
        preamble = [ln for ln in root.own if ln.strip()]
        return Node(level=0, title=h1.title, own=[*preamble, *h1.own] if preamble else h1.own,
                    children=h1.children)
    return root


Dated = Callable[[str], bool]


def split(text: str, title: str, max_chars: int = 1200, min_chars: int = 160,
          dated: Dated | None = None) -> list[Chunk]:
    """`dated(heading)`: whether a heading names a day. A section whose sub-headings name two days or more
    (a journal) splits at them whatever its size, each day its own chunk, so each is dated by its heading."""
    root = parse(text, title)
    chunks: list[Chunk] = []
    _emit(root, (root.title,), (), chunks, max_chars, min_chars, dated)
    return chunks


def _emit(node: Node, crumbs: tuple[str, ...], anchor: tuple[str, ...], out: list[Chunk],
          max_chars: int, min_chars: int, dated: Dated | None = None) -> None:
    full = node.full_text()
    if not full:
        return
    days = {id(c) for c in node.children if dated is not None and dated(c.title)}
    if (len(full) <= max_chars and len(days) < 2) or not node.children:
        _add(out, crumbs, anchor, full, max_chars)
        return
    # Too big (or a journal): keep the own text plus any tiny children; bigger children, and every dated
    # one, become their own chunks.
    kept = [node.own_text()] if node.own_text() else []
    big: list[Node] = []
    for child in node.children:
        if len(child.full_text()) < min_chars and (len(days) < 2 or id(child) not in days):
            kept.append(child.full_text())
        else:
            big.append(child)
    own = "\n\n".join(p for p in kept if p)
    # A heading line alone says nothing: it is still carried by every child's breadcrumb.
    if own and not (len(own.splitlines()) == 1 and _HEADING.match(own)):
        _add(out, crumbs, anchor, own, max_chars)
    for child in big:
        _emit(child, (*crumbs, child.title), (*anchor, child.title), out, max_chars, min_chars, dated)


def _add(out: list[Chunk], crumbs: tuple[str, ...], anchor: tuple[str, ...], text: str, max_chars: int) -> None:
    parts = _paragraph_split(text, max_chars * 3 // 2) if len(text) > max_chars * 3 // 2 else [text]
    for i, part in enumerate(parts, 1):
        label = crumbs if len(parts) == 1 else (*crumbs[:-1], f"{crumbs[-1]} (part {i}/{len(parts)})")
        key = anchor if len(parts) == 1 else (*anchor, f"part-{i}")
        out.append(Chunk(breadcrumb=label, text=part, anchor="/".join(key)))


def _paragraph_split(text: str, limit: int) -> list[str]:
    """Split at blank lines outside code fences; greedy packing up to `limit` characters."""
    blocks: list[str] = []
    current: list[str] = []
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        if not line.strip() and not in_fence:
            if current:
                blocks.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        blocks.append("\n".join(current))
    parts: list[str] = []
    for block in blocks:
        pieces = [block[i:i + limit] for i in range(0, len(block), limit)] if len(block) > limit else [block]
        for piece in pieces:
            if parts and len(parts[-1]) + len(piece) + 2 <= limit:
                parts[-1] += "\n\n" + piece
            else:
                parts.append(piece)
    return parts or [text]
