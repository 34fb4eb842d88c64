"""`python tests/counted_server.py mcp --profile …`: muninn's own CLI with every call of the real date
parser counted, one line per call appended to $MUNINN_PARSE_COUNT, so a test over stdio can read how
much parsing each tool call made. Nothing else changes: the parser is dateparser itself."""

from __future__ import annotations

import functools
import os
import sys

import dateparser

_real = dateparser.parse


@functools.wraps(_real)
def _counted(*args, **kwargs):
    with open(os.environ["MUNINN_PARSE_COUNT"], "a") as out:
        out.write("1\n")
    return _real(*args, **kwargs)


dateparser.parse = _counted

if __name__ == "__main__":
    from muninn.cli import main

    sys.argv[0] = "muninn"
    main()
