"""Google API keys (`AIza…`) and OAuth access tokens (`ya29.…`). Service-account JSON carries a
PEM key, which the private-key rule takes."""

from __future__ import annotations

import re

from muninn.guards.rules import Rule


class GcpKey(Rule):
    name = "gcp-key"
    patterns = (
        re.compile(r"AIza[0-9A-Za-z_-]{35}"),
        re.compile(r"ya29\.[0-9A-Za-z_-]{20,}"),
    )
    triggers = ("aiza", "ya29.")
    boundary = True
