"""recall_remember: record an observation in the reader's own area, never one from the future."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Literal

from pydantic import Field

from muninn.core import accounts, factfile
from muninn.core.errors import Refused
from muninn.guards.dates import check as dates
from muninn.guards.rules import MARKER_PREFIX
from muninn.plugins.mcp.registry import Output, Params, Tag, ToolSpec
from muninn.plugins.mcp.session import GuardSession


class RememberParams(Params):
    text: str = Field(min_length=1, max_length=20_000, description="What was observed, done or learned")
    title: str | None = Field(None, max_length=120, description="A short title (default: the first line)")
    kind: Literal["observation", "plan"] = Field(
        "observation", description="'plan' for anything that has not happened yet (a check due later)")
    observed_at: str | None = Field(None, max_length=40,
                                    description="ISO time it was observed (default: now); never in the future")
    tags: list[Tag] = Field(default_factory=list, max_length=20)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:48] or "note"


def handle(session: GuardSession, p: RememberParams) -> Output:
    home = session.profile.remember_to
    if home is None:
        raise Refused(f"profile {session.profile.name!r} has no `remember_to` area in policy.yaml")
    now = datetime.now(UTC)
    try:
        observed = (dates.parse_when(p.observed_at) if p.observed_at else now).astimezone(UTC)
    except ValueError:
        raise Refused(f"observed_at {p.observed_at!r} is not an ISO time (e.g. 2026-10-18T14:00:00Z)") from None
    # The title and the tags are read for dates as well as the text: each lands where readers see it.
    said = "\n".join([p.title or "", *p.tags, p.text])
    # observed_at before the account existed is refused; `policy apply` records when that was.
    created = accounts.created_at(session.settings.workspace, session.profile.account)
    verdict = dates.check_observation(said, observed, plan=p.kind == "plan", now=now, not_before=created)
    if not verdict.allowed:
        raise Refused(verdict.reason)
    # Values and patterns are scrubbed before anything is derived from the text: the file name,
    # the 120-character title and the tags are cut or slugged from scrubbed text, so no cut or slug
    # can keep part of a value the scrubber would have caught whole.
    body = session.redactor.scrub_all(p.text)
    title = session.redactor.scrub_all(p.title) if p.title else (body.strip().splitlines() or ["note"])[0]
    title = _cut_title(title)
    # A date and an id, no word of the text: the name is shown outside the untrusted-data label
    # (hits[].uri, briefing lines, recall_list), so an agent's words must not be in it.
    name = untrusted_name(observed)
    folder = "plans" if p.kind == "plan" else "observations"
    uri = session.require("recall_remember", f"{home}/{folder}/{observed:%Y-%m}/{name}", "write")
    # Dated by when it was observed (UTC, with the time of day), so --since, recency and questions
    # about a day find it; the fact file's owner writes the keys every reader expects.
    doc = factfile.render(factfile.FactFile(
        id=f"{folder}/{session.profile.name}/{name.removesuffix('.md')}", source=folder, kind=p.kind,
        title=title, body=body, breadcrumb=(f"{p.kind.capitalize()} by {session.profile.name}", title),
        lead=f"{p.kind.capitalize()} by {session.profile.name} ({session.profile.kind}), "
             f"{observed:%Y-%m-%d %H:%M} UTC: {title}",
        date=factfile.format_date(observed), tags=tuple(_slug(session.redactor.scrub_all(t)) for t in p.tags),
        extra={"written_by": session.profile.name, "trust": "trusted" if session.profile.trusted else "untrusted",
               "observed_at": observed.isoformat(), "recorded_at": now.isoformat()},
    )).text
    session.client.write(uri, doc, mode="create")
    session.indexed({uri: doc})   # findable by keywords at once, by every reader the policy lets read it
    return Output(f"Recorded {p.kind} at {uri}", {"uri": uri, "kind": p.kind, "observed_at": observed.isoformat()})


def untrusted_name(observed: datetime) -> str:
    """The file name of a remembered fact: when it was observed and a random id."""
    return f"{observed:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:12]}.md"


_MARKER = re.compile(re.escape(MARKER_PREFIX) + r"[^\]\n]*\]")
TITLE_MAX = 120


def _cut_title(title: str) -> str:
    """At most TITLE_MAX characters, never half a `[REDACTED:…]` marker: a dangling `[REDAC` reads as
    broken markup in every listing and in a markdown link."""
    if len(title) <= TITLE_MAX:
        return title
    inside = next((m for m in _MARKER.finditer(title) if m.start() < TITLE_MAX < m.end()), None)
    return (title[:inside.start()] if inside else title[:TITLE_MAX]).rstrip()


REMEMBER = ToolSpec(
    name="recall_remember",
    description=(
        "Record an observation in this reader's own area of the shared memory. Only after it "
        "happened: a text or observed_at dated after now is refused, unless kind='plan'. Do not "
        "write secret values (they are redacted anyway). Other readers see who wrote it; an untrusted "
        "reader's writing (an agent's) reaches them labelled as untrusted data."
    ),
    params=RememberParams, handler=handle, access="write", read_only=False, destructive=False, idempotent=False,
    init_agent=True,
)
