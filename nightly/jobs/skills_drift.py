"""skills-drift: every skill under viking://agent/skills against the approved list and its pins
(muninn.nightly.skills says what approved and pinned mean). Each skill's current hash is in the
job's data, to pin it."""

from __future__ import annotations

from muninn.core.client import OpenViking
from muninn.core.errors import NotFound
from muninn.nightly.jobs import Context, JobResult
from muninn.nightly.skills import SKILLS, content_hash, load, parse_approved


def skills_drift(ctx: Context) -> JobResult:
    # What the owner typed in muninn.yaml, then what `muninn skills install` pinned (newer, so it wins).
    approved = parse_approved([*ctx.settings.nightly.approved_skills, *load(ctx.settings)])
    with OpenViking.user(ctx.settings) as client:
        try:
            uris = {e.uri.rstrip("/").rsplit("/", 1)[-1]: e.uri.rstrip("/") for e in client.ls(SKILLS)}
        except NotFound:
            uris = {}
        hashes = {name: content_hash(client, uri) for name, uri in uris.items()}
    unknown = sorted(set(uris) - set(approved))
    changed = sorted(n for n in uris if approved.get(n) and approved[n] != hashes[n])
    problems = [f"not approved: {', '.join(unknown)}"] if unknown else []
    problems += [f"content changed since approved: {', '.join(changed)}"] if changed else []
    detail = "; ".join(problems) or f"{len(uris)} skill(s), all approved"
    return JobResult("skills-drift", not problems, detail,
                     {"skills": sorted(uris), "unapproved": unknown, "changed": changed,
                      "sha256": {n: f"sha256:{h}" for n, h in sorted(hashes.items())}})
