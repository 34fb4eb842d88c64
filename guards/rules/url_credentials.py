"""`scheme://user:pass@host`: the password goes, the user and host stay findable."""

from __future__ import annotations

import re

from muninn.guards.rules import Rule


class UrlCredentials(Rule):
    name = "url-credentials"
    patterns = (re.compile(r"://[^\s:@/'\"]*:(?P<secret>[^\s@/'\"]+)@"),)
    triggers = ("://",)
