"""JSON Web Tokens: three base64url parts, the first two JSON objects (`eyJ` = `{"`)."""

from __future__ import annotations

import re

from muninn.guards.rules import Rule


class Jwt(Rule):
    name = "jwt"
    patterns = (re.compile(r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"),)
    triggers = ("eyj",)
    boundary = True
