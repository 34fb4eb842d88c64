"""Skills drift: every agent loads viking://agent/skills, and any user's key can write there
(OpenViking 0.5.2 has no server-side write control on it). Anything not on the approved list fails."""

from __future__ import annotations

from muninn.core.client import OpenViking
from muninn.core.errors import NotFound
from muninn.nightly.jobs import Context, JobResult

SKILLS = "viking://agent/skills"


def skills_drift(ctx: Context) -> JobResult:
    approved = set(ctx.settings.nightly.approved_skills)
    with OpenViking.user(ctx.settings) as client:
        try:
            names = {e.uri.rstrip("/").rsplit("/", 1)[-1] for e in client.ls(SKILLS)}
        except NotFound:
            names = set()
    unknown = sorted(names - approved)
    detail = (f"not approved: {', '.join(unknown)}" if unknown
              else f"{len(names)} skill(s), all approved")
    return JobResult("skills-drift", not unknown, detail, {"skills": sorted(names), "unapproved": unknown})
