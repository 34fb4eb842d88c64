"""Chat and CI webhook URLs: whoever holds one posts as the integration or starts the build, so the token in
it is a credential. Read as families of where a token sits in a URL, not by host:

- in the path after a hook segment (`/hooks/`, `/hook/`, `/webhook(s)/`): every segment that looks made up,
  so Mattermost's `/hooks/<token>`, Rocket.Chat's `/hooks/<id>/<token>`, Discord-like `/webhooks/<id>/<token>`
  on any host, Home Assistant's `/api/webhook/<id>`; Zapier's `/hooks/catch/<n>/<token>` (short);
- after a key segment (`/with/key/<key>` for IFTTT, `/token/<t>`), and a Slack-shaped `/services/T…/B…/…`
  on any host (Mattermost and Rocket.Chat serve those too; hooks.slack.com is slack.py's);
- in the query: any parameter named for a token or key (`token=`, `private_token=`, `api_key=`, `circle-token=`),
  shorter when it looks made up (a Jenkins build token); `sig=` (Power Automate, Logic Apps) is azure.py's;
- Discord's and Microsoft Teams' (office.com) own forms.

A piece of ordinary words (`/hooks/post-receive-notify-all-teams`) or a number alone is a name, not a token."""

from __future__ import annotations

import re
from collections.abc import Iterator

from muninn.guards.rules import Rule, is_placeholder, ordinary_words

_SEGMENT = r"[A-Za-z0-9_.~%-]+"
_HOOK_PATH = re.compile(rf"/(?:web)?hooks?/(?P<path>{_SEGMENT}(?:/{_SEGMENT}){{0,4}})")
_ZAPIER = re.compile(r"/hooks/(?:catch|standard)/\d+/(?P<secret>[A-Za-z0-9]{5,})")
_SLACK_SHAPED = re.compile(r"/services/(?P<secret>T[A-Z0-9]{8,}/B[A-Z0-9]{8,}/[A-Za-z0-9]{20,})")
_QUERY = re.compile(r"[?&][\w.-]*(?:token|key|secret)=(?P<secret>[\w%.~-]{8,})(?=[&#\s\"'<>)\]]|$)")


def _made_up(value: str, least: int = 16) -> bool:
    """A token's look: long enough, letters and digits, not a piece of ordinary words."""
    return (len(value) >= least and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
            and not ordinary_words(value) and not is_placeholder(value))


class WebhookUrl(Rule):
    name = "webhook-url"
    patterns = (
        re.compile(r"discord(?:app)?\.com/api/webhooks/\d{5,}/(?P<secret>[\w-]{30,})"),
        re.compile(r"\.office\.com/webhook(?:b2)?/(?P<secret>[^\s\"'<>)\]]{20,})"),
        re.compile(r"/(?:with/)?(?:key|token)s?/(?P<secret>[A-Za-z0-9_-]{16,})(?![\w.-])"),
        _ZAPIER,
        _SLACK_SHAPED,
        _QUERY,
    )
    triggers = ("discord", ".office.com/webhook", "token", "key", "secret", "/hook", "/webhook", "/services/")

    def accept(self, match: re.Match[str], value: str) -> bool:
        if match.re in (_ZAPIER, _SLACK_SHAPED):
            return super().accept(match, value)
        # A long query value is a token unless it is words; a shorter one must look made up (`Rk4x-Tq9m-Zp2w`).
        if match.re is _QUERY and len(value) < 20:
            return _made_up(value, 8)
        return super().accept(match, value) and not ordinary_words(value) and any(c.isdigit() for c in value)

    def spans(self, text: str, lowered: str | None = None, *, checked: bool = False) -> Iterator[tuple[int, int]]:
        lowered = text.lower() if lowered is None else lowered
        if not checked and not any(t in lowered for t in self.triggers):
            return
        yield from super().spans(text, lowered, checked=True)
        if "hook" not in lowered:
            return
        for m in _HOOK_PATH.finditer(text):
            at = m.start("path")
            for segment in m.group("path").split("/"):
                if _made_up(segment):
                    yield at, at + len(segment)
                at += len(segment) + 1
