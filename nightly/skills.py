"""What an approved skill is, for the skills-drift job (jobs/skills_drift.py) and `muninn skills install`:
every agent loads viking://agent/skills, and any user's key can write there
(OpenViking 0.5.2 has no server-side write control on it). A skill not on the approved list fails,
and so does an approved skill pinned by content (`name@sha256:<hex>` in `nightly.approved_skills`)
whose content changed: the hash is over every file under the skill, path and text, in path order.
`muninn skills install` adds its pins to a state file in the workspace, read here too."""

from __future__ import annotations

import hashlib
import json

from muninn.core import atomic
from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.core.errors import ConfigError

SKILLS = "viking://agent/skills"


def content_hash(client: OpenViking, skill_uri: str) -> str:
    digest = hashlib.sha256()
    for uri in sorted(e.uri for e in client.walk(skill_uri)):
        rel = uri[len(skill_uri):]
        digest.update(f"{len(rel)}:{rel}".encode())
        text = client.read(uri).encode()
        digest.update(f"{len(text)}:".encode() + text)
    return digest.hexdigest()


def parse_approved(entries: list[str]) -> dict[str, str | None]:
    """{name: pinned sha256 or None} from `name` and `name@sha256:<hex>` entries."""
    out: dict[str, str | None] = {}
    for entry in entries:
        name, _, pin = entry.partition("@")
        out[name] = pin.removeprefix("sha256:").lower() or None
    return out


# The pins `muninn skills install` records (`<home>/skills/approved.json`): read here, written there.
def load(settings: Settings) -> list[str]:
    """The approved entries (`name@sha256:<hex>`) the install recorded."""
    path = settings.paths.approved_skills
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text())
        return [str(e) for e in data["approved"]]
    except (ValueError, KeyError, TypeError):
        raise ConfigError("the approved skills list is damaged", path=str(path),
                          fix="run `muninn skills install` again for each skill you approve") from None


def save(settings: Settings, entries: list[str]) -> None:
    atomic.write_text(settings.paths.approved_skills, json.dumps({"approved": entries}, indent=1) + "\n", 0o600)
