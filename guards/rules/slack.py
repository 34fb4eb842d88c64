"""Slack tokens (`xoxb-`, `xoxp-`, …, `xapp-`) and incoming-webhook paths."""

from __future__ import annotations

import re

from muninn.guards.rules import Rule


class SlackToken(Rule):
    name = "slack-token"
    patterns = (
        re.compile(r"x(?:ox[abposre]|app)-[A-Za-z0-9-]{10,}"),
        re.compile(r"hooks\.slack\.com/(?:services|workflows)/(?P<secret>[A-Za-z0-9/_-]{20,})"),
    )
    boundary = True
    triggers = ("xox", "xapp-", "hooks.slack.com")
