"""The MCP stream as the server reads it: one JSON-RPC message a line, never nested too deep to parse.

The SDK parses each line with pydantic, whose JSON reader stops at a fixed nesting depth; a line past
it is dropped without an answer, so a call with a deeply nested argument left the client waiting for
ever. Here every container nested deeper than MAX_DEPTH is replaced by a string saying so, before the
SDK reads the line: the request keeps its id, reaches the guard and is refused by the tool's schema
like any other wrong argument.

The stream is the process's stdin, claimed as the SDK claims it: the server reads a private
duplicate, and descriptor 0 points at the null device while it serves, so a child the server starts
reads nothing of the MCP stream.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import AsyncIterator, Iterator

import anyio

MAX_DEPTH = 64
CUT = '"[nested deeper than 64 levels]"'


def cap_depth(line: str, limit: int = MAX_DEPTH) -> str:
    """`line` with every array or object that opens below `limit` levels replaced by CUT. Linear in the
    line; strings (and the brackets inside them) are copied as they are."""
    if line.count("[") + line.count("{") <= limit:
        return line
    out: list[str] = []
    depth, skipping, in_string, escaped = 0, 0, False, False
    start = 0   # where the text not yet copied begins
    for i, ch in enumerate(line):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit and not skipping:
                out.append(line[start:i])
                skipping = depth
        elif ch in "]}":
            if skipping and depth == skipping:
                out.append(CUT)
                start = i + 1
                skipping = 0
            depth -= 1
    if skipping:          # unbalanced: the SDK refuses the line as it is
        return line
    out.append(line[start:])
    return "".join(out)


class _Lines:
    def __init__(self, source: anyio.AsyncFile[str]) -> None:
        self._source = source

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._source:
            yield cap_depth(line)


@contextlib.contextmanager
def claimed_stdin() -> Iterator[_Lines]:
    """The MCP stream from descriptor 0, depth-capped; fd 0 reads the null device until the block ends."""
    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        # closefd=False: a worker thread may still block on the descriptor after the server stops.
        text = io.TextIOWrapper(os.fdopen(wire, "rb", closefd=False), encoding="utf-8", errors="replace")
        yield _Lines(anyio.wrap_file(text))
    finally:
        os.dup2(wire, 0)
