"""Chat webhook URLs: whoever holds one posts as the integration, so the token in it is a credential.
Discord, Microsoft Teams (office.com; the Power Automate / Logic Apps `sig=` is azure.py's), Google Chat (`key=` and
`token=`), Mattermost and Rocket.Chat `/hooks/<id>`, and any `/hooks/` or `/webhook(s)/` path ending in a
long random piece. Slack's own are slack.py's."""

from __future__ import annotations

import re

from muninn.guards.rules import Rule, ordinary_words


class WebhookUrl(Rule):
    name = "webhook-url"
    patterns = (
        re.compile(r"discord(?:app)?\.com/api/webhooks/\d{5,}/(?P<secret>[\w-]{30,})"),
        re.compile(r"\.office\.com/webhook(?:b2)?/(?P<secret>[^\s\"'<>)\]]{20,})"),
        # `sig=` (Power Automate, Logic Apps) is azure.py's.
        re.compile(r"[?&](?:token|key)=(?P<secret>[\w%.~-]{20,})(?=[&\s\"'<>)\]]|$)"),
        re.compile(r"/hooks?/(?P<secret>[A-Za-z0-9_-]{20,})(?![\w/.-])"),
        re.compile(r"/webhooks?/(?:[\w-]{1,40}/)?(?P<secret>[A-Za-z0-9_-]{24,})(?![\w/.-])"),
    )
    triggers = ("discord", ".office.com/webhook", "token=", "key=", "/hook", "/webhook")

    def accept(self, match: re.Match[str], value: str) -> bool:
        # A long piece of ordinary words (`/hooks/post-receive-notify-all-teams`) is a name, not a token.
        return super().accept(match, value) and not ordinary_words(value) and any(c.isdigit() for c in value)
